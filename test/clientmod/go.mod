module example.com/narad-client-test

go 1.26.0

require github.com/narad-io/narad v0.0.0-00010101000000-000000000000

replace github.com/narad-io/narad => ../..
