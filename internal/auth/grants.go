package auth

import (
	"strings"

	"github.com/narad-io/narad/internal/meta"
)

// Match reports whether a grant pattern covers topic: an exact name, or a
// prefix ending in '*' ("*" covers every topic).
func Match(pattern, topic string) bool {
	if prefix, wild := strings.CutSuffix(pattern, "*"); wild {
		return strings.HasPrefix(topic, prefix)
	}
	return pattern == topic
}

// Allows reports whether grants let their holder do action on topic. An
// admin grant on a pattern allows every action on the topics it matches.
func Allows(gs []meta.Grant, action, topic string) bool {
	for _, g := range gs {
		if g.Action != action && g.Action != meta.ActionAdmin {
			continue
		}
		for _, p := range g.Patterns {
			if Match(p, topic) {
				return true
			}
		}
	}
	return false
}

// IsRoot reports whether grants hold admin on every topic ("admin" on
// "*"): what user management and cluster operations need in full.
func IsRoot(gs []meta.Grant) bool {
	for _, g := range gs {
		if g.Action == meta.ActionAdmin && containsString(g.Patterns, "*") {
			return true
		}
	}
	return false
}

// IsAdmin reports whether grants hold admin on any pattern.
func IsAdmin(gs []meta.Grant) bool {
	for _, g := range gs {
		if g.Action == meta.ActionAdmin {
			return true
		}
	}
	return false
}

// Covers reports whether holder's grants include every (action, pattern)
// of want — the no-escalation rule: a user may hand out only what it
// holds. A pattern is covered by an equal one, or by a wildcard whose
// prefix starts it ("orders.*" covers "orders.eu" and "orders.eu.*").
func Covers(holder, want []meta.Grant) bool {
	for _, w := range want {
		for _, p := range w.Patterns {
			if !coveredBy(holder, w.Action, p) {
				return false
			}
		}
	}
	return true
}

func coveredBy(holder []meta.Grant, action, pattern string) bool {
	for _, g := range holder {
		if g.Action != action && g.Action != meta.ActionAdmin {
			continue
		}
		for _, h := range g.Patterns {
			if h == pattern {
				return true
			}
			if prefix, wild := strings.CutSuffix(h, "*"); wild && strings.HasPrefix(pattern, prefix) {
				return true
			}
		}
	}
	return false
}

func containsString(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
