package auth

import (
	"testing"

	"github.com/narad-io/narad/internal/meta"
)

func g(action string, patterns ...string) meta.Grant {
	return meta.Grant{Action: action, Patterns: patterns}
}

func TestMatch(t *testing.T) {
	for _, tc := range []struct {
		pattern, topic string
		want           bool
	}{
		{"orders", "orders", true},
		{"orders", "orders2", false},
		{"orders", "order", false},
		{"invoices.*", "invoices.eu", true},
		{"invoices.*", "invoices.", true},
		{"invoices.*", "invoices", false},
		{"*", "anything", true},
		{"a*", "b", false},
	} {
		if got := Match(tc.pattern, tc.topic); got != tc.want {
			t.Errorf("Match(%q, %q) = %v, want %v", tc.pattern, tc.topic, got, tc.want)
		}
	}
}

func TestAllows(t *testing.T) {
	gs := []meta.Grant{g("produce", "orders", "eu.*"), g("admin", "ops.*")}
	for _, tc := range []struct {
		action, topic string
		want          bool
	}{
		{"produce", "orders", true},
		{"produce", "eu.fr", true},
		{"consume", "orders", false},
		{"produce", "us.ny", false},
		{"consume", "ops.logs", true}, // admin on a pattern allows every action there
		{"create", "ops.new", true},
		{"create", "orders", false},
	} {
		if got := Allows(gs, tc.action, tc.topic); got != tc.want {
			t.Errorf("Allows(%s, %s) = %v, want %v", tc.action, tc.topic, got, tc.want)
		}
	}
	if IsRoot(gs) || !IsAdmin(gs) || !IsRoot([]meta.Grant{g("admin", "x", "*")}) || IsAdmin(nil) {
		t.Error("IsRoot / IsAdmin")
	}
}

func TestCoversIsNoEscalation(t *testing.T) {
	holder := []meta.Grant{g("produce", "orders.*", "audit"), g("admin", "team.*")}
	for _, tc := range []struct {
		want []meta.Grant
		ok   bool
	}{
		{[]meta.Grant{g("produce", "orders.eu")}, true},
		{[]meta.Grant{g("produce", "orders.eu.*")}, true},
		{[]meta.Grant{g("produce", "orders.*")}, true},
		{[]meta.Grant{g("produce", "audit")}, true},
		{[]meta.Grant{g("consume", "team.a"), g("admin", "team.b.*")}, true},
		{[]meta.Grant{g("produce", "orders")}, false}, // "orders.*" does not cover "orders"
		{[]meta.Grant{g("produce", "*")}, false},
		{[]meta.Grant{g("consume", "orders.eu")}, false},
		{[]meta.Grant{g("produce", "audit.*")}, false},
		{[]meta.Grant{g("admin", "*")}, false},
		{[]meta.Grant{g("produce", "orders.eu", "secret")}, false}, // one uncovered pattern refuses all
		{nil, true},
	} {
		if got := Covers(holder, tc.want); got != tc.ok {
			t.Errorf("Covers(%v) = %v, want %v", tc.want, got, tc.ok)
		}
	}
	if !Covers([]meta.Grant{g("admin", "*")}, []meta.Grant{g("admin", "*"), g("produce", "x")}) {
		t.Error("root must cover everything")
	}
}
