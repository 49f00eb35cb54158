package httpapi

import (
	"path/filepath"
	"strings"
)

// diskRoots are the forms of the server's data directory that no error
// body may show a path under (Options.DataDir): messages built from
// storage, WAL or metastore errors can carry file names, and a client has
// no business with the server's disk layout (the full error is in the
// server's log).
func diskRoots(dir string) []string {
	if dir == "" {
		return nil
	}
	roots := []string{filepath.Clean(dir)}
	if abs, err := filepath.Abs(dir); err == nil && abs != roots[0] {
		roots = append(roots, abs)
	}
	// Longest first, so an absolute root is not half-replaced by a
	// relative one that is its suffix.
	if len(roots) == 2 && len(roots[1]) > len(roots[0]) {
		roots[0], roots[1] = roots[1], roots[0]
	}
	return roots
}

// scrubPaths replaces each path under one of roots in msg with a phrase
// that names no path. A root matches only at the start of a token and
// followed by "/": "data" as a word is not a path.
func scrubPaths(msg string, roots []string) string {
	const placeholder = "(a file in the data directory)"
	for _, root := range roots {
		from := 0
		for {
			i := strings.Index(msg[from:], root)
			if i < 0 {
				break
			}
			i += from
			j := i + len(root)
			if !tokenStart(msg, i) || j >= len(msg) || msg[j] != '/' {
				from = j
				continue
			}
			for j < len(msg) && !tokenEnd(msg[j]) {
				j++
			}
			msg = msg[:i] + placeholder + msg[j:]
			from = i + len(placeholder)
		}
	}
	return msg
}

func tokenStart(s string, i int) bool {
	return i == 0 || strings.IndexByte(" \t\n\"'`(=[", s[i-1]) >= 0
}

func tokenEnd(c byte) bool { return strings.IndexByte(" \t\n\"'`,;:()]", c) >= 0 }
