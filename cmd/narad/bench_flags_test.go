package main

import (
	"strings"
	"sync"
	"testing"
)

// Bad flags are refused before anything is sent: no topic is created, no
// message is produced, and the message names the flag.
func TestBenchRefusesBadFlagsBeforeSending(t *testing.T) {
	for _, tt := range []struct {
		args []string
		says string
	}{
		{[]string{"--size", "0"}, "--size must be 1..1048576 bytes (the server's payload bounds), got 0"},
		{[]string{"--size", "1048577"}, "--size must be 1..1048576 bytes"},
		{[]string{"--size", "-5"}, "--size must be 1..1048576 bytes"},
		{[]string{"--batch", "0"}, "--batch must be 1..10000 records (the server's cap), got 0"},
		{[]string{"--batch", "10001"}, "--batch must be 1..10000 records"},
		{[]string{"--batch", "10000", "--size", "4096"}, "--batch 10000 of --size 4096 makes a request of 39 MiB, over the server's 16 MiB: lower --batch or --size"},
		{[]string{"--messages", "0"}, "--messages must be at least 1, got 0"},
		{[]string{"--producers", "0"}, "--producers must be 1..1000, got 0"},
		{[]string{"--producers", "1001"}, "--producers must be 1..1000, got 1001"},
		{[]string{"--consumers", "-1"}, "--consumers must be 0..1000, got -1"},
		{[]string{"--consume-max", "0"}, "--consume-max must be 1..1000 records (the server's cap), got 0"},
		{[]string{"--consume-max", "1001"}, "--consume-max must be 1..1000 records"},
		{[]string{"--partitions", "-1"}, "--partitions must not be negative, got -1"},
		{[]string{"--replication-factor", "6"}, "--replication-factor must be 1..5 copies, got 6"},
		{[]string{"orders", "--replication-factor", "3"}, "--replication-factor is the scratch topic's; orders exists already"},
		{[]string{"--duration", "0s"}, "--duration must be above 0, got 0s"},
		{[]string{"--duration", "10s", "--messages", "5"}, "give --messages or --duration, not both"},
		{[]string{"--duration", "ten"}, `invalid argument "ten" for "--duration" flag`},
		{[]string{"orders", "--consume"}, "--consume/--consumers/--e2e on orders would take other producers' records from its queue: leave out TOPIC"},
		{[]string{"orders", "--consumers", "2"}, "--consume/--consumers/--e2e on orders would take"},
		{[]string{"orders", "--partitions", "3"}, "--partitions sizes the scratch topic; orders exists already"},
		{[]string{"--batch-format", "xml"}, `--batch-format "xml": want json, ndjson or binary`},
		{[]string{"a", "b"}, "accepts at most 1 arg(s), received 2"},
		{[]string{"--rate", "-1"}, "--rate must not be negative, got -1"},
		{[]string{"--e2e", "--size", "15"}, "--e2e stamps each payload with its send time: --size must be at least 16 bytes, got 15"},
		{[]string{"--via-child"}, "--via-child measures the child's end-to-end latency: give --e2e too"},
		{[]string{"orders", "--e2e", "--via-child"}, "--via-child attaches a scratch child to the scratch topic: leave out TOPIC"},
		{[]string{"orders", "--e2e"}, "--consume/--consumers/--e2e on orders would take"},
		{[]string{"--delay", "-1s"}, "--delay must be 0..8760h (a year), got -1s"},
		{[]string{"--delay", "9000h"}, "--delay must be 0..8760h"},
		{[]string{"--delay", "5s", "--consume"}, "--delay with consumers: they would wait out the delay"},
		{[]string{"--delay", "5s", "--batch", "10", "--batch-format", "binary"}, "--delay: the binary batch format has no field"},
		{[]string{"--keys", "-1"}, "--keys must not be negative, got -1"},
		{[]string{"--ordering", "fifo"}, `--ordering "fifo": want none or group`},
		{[]string{"orders", "--ordering", "group"}, "--ordering is the scratch topic's; orders exists already"},
		{[]string{"--allow-nonempty"}, "--allow-nonempty is for a named TOPIC; the scratch topic is always empty"},
	} {
		api := newBenchAPI(t, nil)
		r := against(api.broker).run(t, append([]string{"bench"}, tt.args...)...)
		if r.code != 1 || !strings.Contains(r.stderr, tt.says) {
			t.Errorf("bench %v: exit %d stderr %q, want it to say %q", tt.args, r.code, r.stderr, tt.says)
		}
		if n := len(api.requests()); n != 0 {
			t.Errorf("bench %v: %d requests sent before the flags were checked", tt.args, n)
		}
	}
	// Every problem at once, not one per try.
	api := newBenchAPI(t, nil)
	r := against(api.broker).run(t, "bench", "--size", "0", "--batch", "0", "--producers", "0")
	for _, want := range []string{"--size must be", "--batch must be", "--producers must be"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr %q lacks %q", r.stderr, want)
		}
	}
}

// --delay schedules every record the bench produces: the single
// produce's Narad-Delay header, a batch record's "delay".
func TestBenchDelaySchedulesEveryRecord(t *testing.T) {
	for _, batch := range []string{"1", "5"} {
		var mu sync.Mutex
		var bad []string
		seen := 0
		api := newBenchAPI(t, func(r req) (int, string) {
			mu.Lock()
			defer mu.Unlock()
			if r.Method == "POST" && strings.HasSuffix(r.Path, "/produce") {
				seen++
				if r.Header.Get("Narad-Delay") != "1m30s" {
					bad = append(bad, "header "+r.Header.Get("Narad-Delay"))
				}
			}
			if r.Method == "POST" && strings.HasSuffix(r.Path, "/produce/batch") {
				seen++
				if strings.Count(r.Body, `"delay":"1m30s"`) != 5 {
					bad = append(bad, "body "+r.Body)
				}
				return 202, `{"accepted":5}`
			}
			return accept(r)
		})
		r := against(api.broker).run(t, "bench", "--messages", "10", "--producers", "1", "--batch", batch, "--delay", "90s")
		if r.code != 0 {
			t.Fatalf("batch %s: exit %d: %s", batch, r.code, r.stderr)
		}
		if seen == 0 || len(bad) > 0 {
			t.Fatalf("batch %s: %d produce requests, unscheduled: %q", batch, seen, bad)
		}
	}
}

// --keys spreads the records over keys in turn and --ordering is the
// scratch topic's: what a message-group run needs.
func TestBenchKeysAndOrdering(t *testing.T) {
	var mu sync.Mutex
	keys := map[string]int{}
	api := newBenchAPI(t, func(r req) (int, string) {
		mu.Lock()
		defer mu.Unlock()
		if r.Method == "POST" && strings.HasSuffix(r.Path, "/produce") {
			keys[r.q("key")]++
		}
		return accept(r)
	})
	r := against(api.broker).run(t, "bench", "--messages", "9", "--producers", "1", "--keys", "3", "--ordering", "group")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if len(keys) != 3 || keys["k0"] != 3 || keys["k1"] != 3 || keys["k2"] != 3 {
		t.Fatalf("keys sent %v, want k0, k1, k2 three times each", keys)
	}
	if cs := api.only("POST", "/v1/topics"); len(cs) != 1 || !strings.Contains(cs[0].Body, `"ordering":"group"`) {
		t.Fatalf("the scratch topic's create %v lacks the ordering", cs)
	}
}

// --api sqs refuses, before anything is sent, what SQS's requests cannot
// carry, and the SQS flags are refused without it.
func TestBenchSQSRefusesWhatSQSCannotSay(t *testing.T) {
	for _, tt := range []struct {
		args []string
		says string
	}{
		{[]string{"--api", "amqp"}, `--api "amqp": want native or sqs`},
		{[]string{"--api", "sqs", "--batch", "11"}, "--batch 11 with --api sqs: SendMessageBatch takes at most 10 messages"},
		{[]string{"--api", "sqs", "--batch", "10", "--size", "200000"}, "--batch 10 of --size 200000 with --api sqs: SendMessageBatch takes at most 1.0 MiB in all"},
		{[]string{"--api", "sqs", "--consume", "--consume-max", "11"}, "--consume-max 11 with --api sqs: ReceiveMessage takes at most 10 messages"},
		{[]string{"--api", "sqs", "--batch", "5", "--batch-format", "ndjson"}, "--batch-format ndjson: --api sqs speaks SQS's JSON protocol only"},
		{[]string{"--api", "sqs", "--keys", "3"}, "--keys: --api sqs sends no keys"},
		{[]string{"--api", "sqs", "--ordering", "group"}, "--ordering group makes a FIFO queue, which needs a MessageGroupId"},
		{[]string{"--api", "sqs", "--e2e", "--via-child"}, "--via-child: --api sqs measures the queue's own protocol"},
		{[]string{"--api", "sqs", "--delay", "16m"}, "--delay 16m0s with --api sqs: DelaySeconds is at most 15m"},
		{[]string{"--api", "sqs", "--delay", "1500ms"}, "--delay 1.5s with --api sqs: DelaySeconds is whole seconds"},
		{[]string{"--region", "eu-west-1"}, "--region signs SQS requests: give --api sqs too"},
		{[]string{"--access-key-id", "AKID"}, "--access-key-id signs SQS requests: give --api sqs too"},
		{[]string{"--api", "sqs", "--access-key-id", "AKID"}, "--api sqs: give both an access key id and its secret"},
	} {
		api := newBenchAPI(t, nil)
		r := against(api.broker).run(t, append([]string{"bench"}, tt.args...)...)
		if r.code != 1 || !strings.Contains(r.stderr, tt.says) {
			t.Errorf("bench %v: exit %d stderr %q, want it to say %q", tt.args, r.code, r.stderr, tt.says)
		}
		if n := len(api.requests()); n != 0 {
			t.Errorf("bench %v: %d requests sent before the flags were checked", tt.args, n)
		}
	}
}
