package httpapi

import "testing"

func TestScrubPathsHidesTheDataDirectory(t *testing.T) {
	roots := []string{"/srv/narad/data", "data"}
	cases := []struct{ in, want string }{
		{"write /srv/narad/data/ingress/00000000000000000001.wal at byte 3: no space left on device",
			"write (a file in the data directory) at byte 3: no space left on device"},
		{`open "data/topics/orders/p00000/hwm": input/output error`,
			`open "(a file in the data directory)": input/output error`},
		{"barrier: write /srv/narad/data/metastore/raft.db: no space", "barrier: write (a file in the data directory): no space"},
		{"metadata of topic data-x is fine", "metadata of topic data-x is fine"},
		{"the data directory is full", "the data directory is full"},
		{"no route GET /v1/topics/x/y", "no route GET /v1/topics/x/y"},
	}
	for _, c := range cases {
		if got := scrubPaths(c.in, roots); got != c.want {
			t.Errorf("scrubPaths(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}
