package fanout

import "strings"

// CopiedCursorFile tells a partition move (package move) whether a file it
// copied out of a partition directory is a cursor file and, if so, whether
// the copy at path reads back whole: the source's cursor keeps running
// and rewrites its file in place, so a copy may catch it mid-write and
// must then be fetched again.
func CopiedCursorFile(name, path string) (cursor bool, err error) {
	if !strings.HasPrefix(name, "fanout-") || !strings.HasSuffix(name, ".offset") {
		return false, nil
	}
	_, _, err = ReadCursorFile(path)
	return true, err
}
