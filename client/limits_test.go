package client

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"
)

func TestCreateUserWithLimits(t *testing.T) {
	c, f := newFake(t, reply{status: 201, body: `{"username":"bob","grants":[],"limits":{"produce_records_per_s":5,"produce_bytes_per_s":0,"consume_requests_per_s":10},"limits_from_defaults":["produce_bytes_per_s","consume_requests_per_s"]}`})
	got, err := c.CreateUser(ctx, CreateUserRequest{Username: "bob", Password: "pw", Limits: &OwnLimits{ProduceRecordsPerS: Rate(5)}})
	if err != nil {
		t.Fatal(err)
	}
	f.expect(seen{Method: "POST", Path: "/v1/users", ContentType: "application/json",
		Body: `{"username":"bob","password":"pw","grants":[],"limits":{"produce_records_per_s":5}}`})
	want := User{Username: "bob", Grants: []Grant{}, Limits: &Limits{ProduceRecordsPerS: 5, ConsumeRequestsPerS: 10},
		LimitsFromDefaults: []string{LimitProduceBytes, LimitConsumeRequests}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("decoded %+v, want %+v", got, want)
	}
}

// SetLimits is a merge patch: values set, nil back to the default, a
// reset alone null, a reset with values null for the others.
func TestSetLimitsSendsAMergePatch(t *testing.T) {
	ok := reply{status: 200, body: `{"username":"bob","grants":[]}`}
	c, f := newFake(t, ok, ok, ok)
	for _, change := range []LimitsChange{
		{Set: map[string]*int64{LimitProduceRecords: Rate(0), LimitConsumeRequests: nil}},
		{Reset: true},
		{Reset: true, Set: map[string]*int64{LimitProduceBytes: Rate(1024)}},
	} {
		if _, err := c.SetLimits(ctx, "bob", change); err != nil {
			t.Fatal(err)
		}
	}
	f.expect(
		seen{Method: "PATCH", Path: "/v1/users/bob", ContentType: "application/json", Body: `{"limits":{"consume_requests_per_s":null,"produce_records_per_s":0}}`},
		seen{Method: "PATCH", Path: "/v1/users/bob", ContentType: "application/json", Body: `{"limits":null}`},
		seen{Method: "PATCH", Path: "/v1/users/bob", ContentType: "application/json", Body: `{"limits":{"consume_requests_per_s":null,"produce_bytes_per_s":1024,"produce_records_per_s":null}}`},
	)
}

// A 429 is a typed error: errors.Is ErrRateLimited, with its Retry-After,
// through wrapping; a client without a RetryPolicy does not retry it.
func TestRateLimitedIsTyped(t *testing.T) {
	c, f := newFake(t, reply{status: 429, body: `{"error":"user \"bob\" is over its produce_records_per_s limit of 5 on this node; retry after 3 s"}`,
		header: map[string]string{"Retry-After": "3"}})
	err := c.Produce(ctx, "orders", []byte("x"), ProduceOptions{})
	wrapped := fmt.Errorf("sending: %w", err)
	if !errors.Is(wrapped, ErrRateLimited) {
		t.Fatalf("%v is not ErrRateLimited", err)
	}
	if d, ok := RateLimited(wrapped); !ok || d != 3*time.Second {
		t.Fatalf("RateLimited = %s %v, want 3s true", d, ok)
	}
	if errors.Is(&APIError{Status: 503}, ErrRateLimited) {
		t.Fatal("a 503 is not rate limited")
	}
	f.mu.Lock()
	n := len(f.got)
	f.mu.Unlock()
	if n != 1 {
		t.Fatalf("%d requests sent, want 1 (no retry without a policy)", n)
	}
}
