package auth

import "testing"

func TestStatic(t *testing.T) {
	s, err := NewStatic(AdminUser, "correct horse")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		user, pass string
		ok         bool
	}{
		{"admin", "correct horse", true},
		{"admin", "correct horse", true}, // second time from the cache
		{"admin", "wrong", false},
		{"root", "correct horse", false},
		{"", "", false},
	}
	for _, c := range cases {
		if _, ok := s.Authenticate(c.user, c.pass); ok != c.ok {
			t.Errorf("Authenticate(%q, %q) = %v, want %v", c.user, c.pass, ok, c.ok)
		}
	}
	if len(s.verified) != 1 {
		t.Fatalf("cache holds %d pairs; only the good one may be cached", len(s.verified))
	}
}
