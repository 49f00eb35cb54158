// Package clientmod is a module of its own, outside Narad's: its test
// imports github.com/narad-io/narad/client the way another program would,
// so that the client stays importable (nothing under internal/ leaks into
// its API) and usable with nothing else of Narad built. scripts/test.sh
// runs it.
package clientmod
