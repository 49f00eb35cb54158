package lease

// fataler is the part of testing.TB that *rapid.T also has.
type fataler interface {
	Helper()
	Fatalf(format string, args ...any)
}

// checkInternal asserts the structural invariants listed in doc.go.
func checkInternal(t fataler, tb *Table) {
	t.Helper()
	tb.mu.Lock()
	defer tb.mu.Unlock()
	if err := tb.checkLocked(); err != nil {
		t.Fatalf("%v", err)
	}
}
