package meta

import (
	"context"
	"encoding/json"
	"fmt"
)

// Rates are a user's request rate limits (docs/http-api.md,
// docs/configuration.md), per second on each node; 0 is unlimited. It is the
// resolved form: a user's own Limits over the node's configured defaults.
type Rates struct {
	ProduceRecordsPerS  int64 `json:"produce_records_per_s"`
	ProduceBytesPerS    int64 `json:"produce_bytes_per_s"`
	ConsumeRequestsPerS int64 `json:"consume_requests_per_s"`
}

// Unlimited reports whether no rate is limited: the fast path of every
// request checks it first.
func (r Rates) Unlimited() bool {
	return r.ProduceRecordsPerS == 0 && r.ProduceBytesPerS == 0 && r.ConsumeRequestsPerS == 0
}

// Limits are the limits a user has of its own, field by field: a nil
// field is not set, and the node's configured default applies to it; a
// set field wins over the default, 0 meaning unlimited. So an operator
// limits one rate of a user without lifting the others, and exempts a
// user from a default by setting it to 0.
type Limits struct {
	ProduceRecordsPerS  *int64 `json:"produce_records_per_s,omitempty"`
	ProduceBytesPerS    *int64 `json:"produce_bytes_per_s,omitempty"`
	ConsumeRequestsPerS *int64 `json:"consume_requests_per_s,omitempty"`
}

// The limit names, as the API, the configuration and the metric's limit
// label spell them.
const (
	LimitProduceRecords  = "produce_records_per_s"
	LimitProduceBytes    = "produce_bytes_per_s"
	LimitConsumeRequests = "consume_requests_per_s"
)

// LimitNames are the limits in their order everywhere (the API, the
// metric, the CLI).
var LimitNames = []string{LimitProduceRecords, LimitProduceBytes, LimitConsumeRequests}

// MaxRate bounds each limit: past it a value is a typo, not a policy (a
// node takes nothing near ten million records or ten GiB a second).
var MaxRate = map[string]int64{
	LimitProduceRecords:  10_000_000,
	LimitProduceBytes:    10 << 30,
	LimitConsumeRequests: 1_000_000,
}

// Field is the limit of that name (LimitNames), for code that walks them.
func (l *Limits) Field(name string) **int64 {
	switch name {
	case LimitProduceRecords:
		return &l.ProduceRecordsPerS
	case LimitProduceBytes:
		return &l.ProduceBytesPerS
	case LimitConsumeRequests:
		return &l.ConsumeRequestsPerS
	}
	return nil
}

// Field is the rate of that name (LimitNames).
func (r *Rates) Field(name string) *int64 {
	switch name {
	case LimitProduceRecords:
		return &r.ProduceRecordsPerS
	case LimitProduceBytes:
		return &r.ProduceBytesPerS
	case LimitConsumeRequests:
		return &r.ConsumeRequestsPerS
	}
	return nil
}

// Empty reports whether no limit is set (nil counts as empty).
func (l *Limits) Empty() bool {
	return l == nil || (l.ProduceRecordsPerS == nil && l.ProduceBytesPerS == nil && l.ConsumeRequestsPerS == nil)
}

// Resolve is l over defaults: each field set in l wins.
func (l *Limits) Resolve(defaults Rates) Rates {
	if l == nil {
		return defaults
	}
	r := defaults
	if l.ProduceRecordsPerS != nil {
		r.ProduceRecordsPerS = *l.ProduceRecordsPerS
	}
	if l.ProduceBytesPerS != nil {
		r.ProduceBytesPerS = *l.ProduceBytesPerS
	}
	if l.ConsumeRequestsPerS != nil {
		r.ConsumeRequestsPerS = *l.ConsumeRequestsPerS
	}
	return r
}

// Defaulted names the limits l leaves to the defaults, in LimitNames
// order.
func (l *Limits) Defaulted() []string {
	out := []string{}
	for _, name := range LimitNames {
		if l == nil || *l.Field(name) == nil {
			out = append(out, name)
		}
	}
	return out
}

// CheckRate reports why v is not a valid value of the limit name.
func CheckRate(name string, v int64) error {
	if v < 0 || v > MaxRate[name] {
		return fmt.Errorf("limits.%s %d: want 0 (unlimited) .. %d per second", name, v, MaxRate[name])
	}
	return nil
}

// CheckLimits reports why l is refused, naming the field.
func CheckLimits(l *Limits) error {
	if l == nil {
		return nil
	}
	for _, name := range LimitNames {
		if p := *l.Field(name); p != nil {
			if err := CheckRate(name, *p); err != nil {
				return err
			}
		}
	}
	return nil
}

// SetLimitsCmd replaces a user's own limits whole (nil or empty: none of
// its own, the defaults apply). Merging a partial change into the record
// is the caller's, so the command means the same on every replay.
type SetLimitsCmd struct {
	Name   string  `json:"name"`
	Limits *Limits `json:"limits,omitempty"`
}

func applySetLimits(a *applyTx, payload json.RawMessage) error {
	var c SetLimitsCmd
	if err := decodePayload(OpSetLimits, payload, &c); err != nil {
		return err
	}
	u, err := a.existingUser(c.Name)
	if err != nil {
		return err
	}
	if err := CheckLimits(c.Limits); err != nil {
		return invalidf("user %q: %v", c.Name, err)
	}
	u.Limits = c.Limits
	if u.Limits.Empty() {
		u.Limits = nil // stored as a record that never had any
	}
	return a.putUser(u)
}

// SetLimits replaces a user's own limits (nil: the defaults apply).
func (s *Store) SetLimits(ctx context.Context, name string, l *Limits) error {
	return s.propose(ctx, OpSetLimits, SetLimitsCmd{Name: name, Limits: l})
}
