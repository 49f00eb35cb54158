package httpapi

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/clock"
	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/ratelimit"
)

// refusalCase is a request the API itself must refuse: its status, a phrase
// the sentence must hold, and the env it runs in.
type refusalCase struct {
	name string
	req  request
	want int
	says string
	opts []envOpt
}

var (
	big      = strings.Repeat("x", 1<<20+1) // a payload over 1 MiB
	bigQuote = `"` + strings.Repeat("y", 1<<20+1) + `"`
)

// manyRecords is a batch of n one-byte records.
func manyRecords(n int) string {
	var b strings.Builder
	b.WriteString(`{"records":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"payload":"a"}`)
	}
	b.WriteString(`]}`)
	return b.String()
}

// manyRequestHeaders is n Narad-Header-* request headers.
func manyRequestHeaders(n int) map[string]string {
	m := make(map[string]string, n)
	for i := range n {
		m[fmt.Sprintf("Narad-Header-H%d", i)] = "v"
	}
	return m
}

// The 400s of docs/http-api.md that the API decides before the data plane
// is asked anything: malformed parameters, bodies, names and paths.
var badRequests = []refusalCase{
	// paths and names
	{name: "dot segment", req: request{method: "GET", target: "/v1/topics/./consume"}, want: 400, says: "reserved"},
	{name: "dot-dot segment", req: request{method: "POST", target: "/v1/topics/../produce", body: "x"}, want: 400, says: "reserved"},
	{name: "empty segment", req: request{method: "POST", target: "/v1/topics//produce", body: "x"}, want: 400, says: "reserved"},
	{name: "bad name produce", req: request{method: "POST", target: "/v1/topics/a$b/produce", body: "x"}, want: 400, says: "outside [A-Za-z0-9._-]"},
	{name: "long name consume", req: request{method: "GET", target: "/v1/topics/" + strings.Repeat("a", 250) + "/consume"}, want: 400, says: "1..249"},
	{name: "bad name ack", req: request{method: "POST", target: "/v1/topics/a$b/ack?receipt_handle=0:0:1"}, want: 400, says: "outside"},
	{name: "bad name alter", req: request{method: "PATCH", target: "/v1/topics/a$b", body: `{"retention_ms":0}`}, want: 400, says: "outside"},
	{name: "bad name delete", req: request{method: "DELETE", target: "/v1/topics/a$b"}, want: 400, says: "outside"},
	{name: "bad name attach", req: request{method: "POST", target: "/v1/topics/a$b/children", body: `{"child":"c"}`}, want: 400, says: "outside"},
	// topic create
	{name: "create: query parameter", req: request{method: "POST", target: "/v1/topics?partitions=3", body: `{"name":"a"}`}, want: 400, says: `unknown query parameter "partitions"`},
	{name: "create: empty body", req: request{method: "POST", target: "/v1/topics"}, want: 400, says: "body is empty"},
	{name: "create: malformed JSON", req: request{method: "POST", target: "/v1/topics", body: `{"name":`}, want: 400, says: "invalid JSON body"},
	{name: "create: unknown field", req: request{method: "POST", target: "/v1/topics", body: `{"name":"a","partitons":3}`}, want: 400, says: `"partitons"`},
	{name: "create: trailing data", req: request{method: "POST", target: "/v1/topics", body: `{"name":"a"} {}`}, want: 400, says: "trailing data"},
	{name: "create: wrong type", req: request{method: "POST", target: "/v1/topics", body: `{"name":"a","partitions":"3"}`}, want: 400, says: `field "partitions": want a number`},
	{name: "create: bad name", req: request{method: "POST", target: "/v1/topics", body: `{"name":"a b"}`}, want: 400, says: "outside"},
	{name: "create: bad ordering", req: request{method: "POST", target: "/v1/topics", body: `{"name":"a","ordering":"FIFO"}`}, want: 400, says: `ordering must be "none" or "group", got "FIFO"`},
	{name: "create: no name", req: request{method: "POST", target: "/v1/topics", body: `{}`}, want: 400, says: "1..249"},
	{name: "create: its own parent", req: request{method: "POST", target: "/v1/topics", body: `{"name":"x","parent":"x"}`}, want: 400, says: "its own parent"},
	{name: "create: its own parent, before the right to manage it", req: request{method: "POST", target: "/v1/topics", body: `{"name":"x","parent":"x"}`, user: "bob"}, want: 400, says: "its own parent", opts: []envOpt{secured}},
	{name: "create: replication factor 0", req: request{method: "POST", target: "/v1/topics", body: `{"name":"a","replication_factor":0}`}, want: 400, says: "replication_factor must be 1..5, got 0"},
	{name: "create: replication factor 6", req: request{method: "POST", target: "/v1/topics", body: `{"name":"a","replication_factor":6}`}, want: 400, says: "replication_factor must be 1..5, got 6"},
	{name: "create: replication factor not a number", req: request{method: "POST", target: "/v1/topics", body: `{"name":"a","replication_factor":"3"}`}, want: 400, says: `field "replication_factor": want a number`},
	{name: "create: bad parent", req: request{method: "POST", target: "/v1/topics", body: `{"name":"a","parent":".."}`}, want: 400, says: "reserved"},
	// list, describe, alter, delete
	{name: "list: limit 0", req: request{method: "GET", target: "/v1/topics?limit=0"}, want: 400, says: "limit must be 1..1000, got 0"},
	{name: "list: limit negative", req: request{method: "GET", target: "/v1/topics?limit=-1"}, want: 400, says: "non-negative"},
	{name: "list: limit text", req: request{method: "GET", target: "/v1/topics?limit=ten"}, want: 400, says: "non-negative"},
	{name: "list: unknown parameter", req: request{method: "GET", target: "/v1/topics?page=2"}, want: 400, says: "limit, page_token"},
	{name: "stats history: parameter", req: request{method: "GET", target: "/v1/topics/orders/stats/history?since=1"}, want: 400, says: "takes none"},
	{name: "stats history: bad name", req: request{method: "GET", target: "/v1/topics/a$b/stats/history"}, want: 400, says: "outside"},
	{name: "describe: parameter", req: request{method: "GET", target: "/v1/topics/orders?stats=1"}, want: 400, says: "takes none"},
	{name: "alter: malformed body", req: request{method: "PATCH", target: "/v1/topics/orders", body: `{"retention_ms":}`}, want: 400, says: "invalid JSON"},
	{name: "alter: unknown field", req: request{method: "PATCH", target: "/v1/topics/orders", body: `{"retention":1}`}, want: 400, says: `"retention"`},
	{name: "alter: replication factor 0", req: request{method: "PATCH", target: "/v1/topics/orders", body: `{"replication_factor":0}`}, want: 400, says: "replication_factor must be 1..5, got 0"},
	{name: "alter: bad ordering", req: request{method: "PATCH", target: "/v1/topics/orders", body: `{"ordering":"fifo"}`}, want: 400, says: `ordering must be "none" or "group", got "fifo"`},
	{name: "alter: replication factor 6", req: request{method: "PATCH", target: "/v1/topics/orders", body: `{"replication_factor":6}`}, want: 400, says: "replication_factor must be 1..5, got 6"},
	{name: "alter: empty body", req: request{method: "PATCH", target: "/v1/topics/orders"}, want: 400, says: "body is empty"},
	{name: "purge: unknown parameter", req: request{method: "POST", target: "/v1/topics/orders/purge?force=1"}, want: 400, says: "takes partition"},
	{name: "purge: bad partition", req: request{method: "POST", target: "/v1/topics/orders/purge?partition=x"}, want: 400, says: "non-negative integer"},
	{name: "purge: a body", req: request{method: "POST", target: "/v1/topics/orders/purge", body: `{"all":true}`}, want: 400, says: `"all"`},
	{name: "bad name purge", req: request{method: "POST", target: "/v1/topics/a$b/purge"}, want: 400, says: "outside"},
	{name: "delete: parameter", req: request{method: "DELETE", target: "/v1/topics/orders?force=1"}, want: 400, says: "takes none"},
	// redrive (docs/concepts.md, "Redrive and purge")
	{name: "redrive: parameter", req: request{method: "POST", target: "/v1/topics/dlq/redrive?max=3", body: `{"to":"orders"}`}, want: 400, says: "takes none"},
	{name: "redrive: bad name", req: request{method: "POST", target: "/v1/topics/a$b/redrive", body: `{"to":"orders"}`}, want: 400, says: "outside"},
	{name: "redrive: empty body", req: request{method: "POST", target: "/v1/topics/dlq/redrive"}, want: 400, says: "body is empty"},
	{name: "redrive: malformed body", req: request{method: "POST", target: "/v1/topics/dlq/redrive", body: `{"to":`}, want: 400, says: "invalid JSON"},
	{name: "redrive: unknown field", req: request{method: "POST", target: "/v1/topics/dlq/redrive", body: `{"to":"orders","limit":3}`}, want: 400, says: `"limit"`},
	{name: "redrive: no to", req: request{method: "POST", target: "/v1/topics/dlq/redrive", body: `{"max":3}`}, want: 400, says: `"to" is required`},
	{name: "redrive: bad to", req: request{method: "POST", target: "/v1/topics/dlq/redrive", body: `{"to":"a b"}`}, want: 400, says: "to: topic name"},
	{name: "redrive: max 0", req: request{method: "POST", target: "/v1/topics/dlq/redrive", body: `{"to":"orders","max":0}`}, want: 400, says: "max must be 1..100000, got 0"},
	{name: "redrive: max over", req: request{method: "POST", target: "/v1/topics/dlq/redrive", body: `{"to":"orders","max":100001}`}, want: 400, says: "max must be 1..100000, got 100001"},
	{name: "redrive: max text", req: request{method: "POST", target: "/v1/topics/dlq/redrive", body: `{"to":"orders","max":"all"}`}, want: 400, says: `field "max"`},
	// produce
	{name: "produce: unknown parameter", req: request{method: "POST", target: "/v1/topics/orders/produce?keys=a", body: "x"}, want: 400, says: "key, partition"},
	{name: "produce: negative partition", req: request{method: "POST", target: "/v1/topics/orders/produce?partition=-1", body: "x"}, want: 400, says: "non-negative integer"},
	{name: "produce: plus partition", req: request{method: "POST", target: "/v1/topics/orders/produce?partition=+1", body: "x"}, want: 400, says: "non-negative integer"},
	{name: "produce: text partition", req: request{method: "POST", target: "/v1/topics/orders/produce?partition=one", body: "x"}, want: 400, says: "non-negative integer"},
	// batch produce
	{name: "batch: parameter", req: request{method: "POST", target: "/v1/topics/orders/produce/batch?key=a", body: `{"records":[{"payload":1}]}`}, want: 400, says: "takes none"},
	{name: "batch: empty body", req: request{method: "POST", target: "/v1/topics/orders/produce/batch"}, want: 400, says: "body is empty"},
	{name: "batch: no records", req: request{method: "POST", target: "/v1/topics/orders/produce/batch", body: `{"records":[]}`}, want: 400, says: "records is empty"},
	{name: "batch: unknown envelope field", req: request{method: "POST", target: "/v1/topics/orders/produce/batch", body: `{"record":[]}`}, want: 400, says: `"record"`},
	{name: "batch: both payloads", req: request{method: "POST", target: "/v1/topics/orders/produce/batch", body: `{"records":[{"payload":1},{"payload":1,"payload_base64":"AQ=="}]}`}, want: 400, says: "record 1: give payload or payload_base64, not both"},
	{name: "batch: bad base64", req: request{method: "POST", target: "/v1/topics/orders/produce/batch", body: `{"records":[{"payload_base64":"%%"}]}`}, want: 400, says: "record 0: payload_base64 is not valid base64"},
	{name: "batch: no payload", req: request{method: "POST", target: "/v1/topics/orders/produce/batch", body: `{"records":[{"payload":1},{"payload":2},{"key":"k"}]}`}, want: 400, says: "record 2: payload or payload_base64 is required"},
	{name: "batch: null payload", req: request{method: "POST", target: "/v1/topics/orders/produce/batch", body: `{"records":[{"payload":1},{"payload":null}]}`}, want: 400, says: "record 1: payload is null"},
	{name: "batch: null payload, NDJSON", req: request{method: "POST", target: "/v1/topics/orders/produce/batch", body: "{\"payload\":null}\n",
		header: map[string]string{"Content-Type": "application/x-ndjson"}}, want: 400, says: "record 0: payload is null"},
	{name: "batch: key and key_base64", req: request{method: "POST", target: "/v1/topics/orders/produce/batch", body: `{"records":[{"payload":1,"key":"a","key_base64":"YQ=="}]}`}, want: 400, says: "record 0: give key or key_base64, not both"},
	{name: "batch: bad key_base64", req: request{method: "POST", target: "/v1/topics/orders/produce/batch", body: `{"records":[{"payload":1},{"payload":1,"key_base64":"%%"}]}`}, want: 400, says: "record 1: key_base64 is not valid base64"},
	{name: "batch: negative partition", req: request{method: "POST", target: "/v1/topics/orders/produce/batch", body: `{"records":[{"payload":1,"partition":-2}]}`}, want: 400, says: "record 0: partition -2 is negative"},
	{name: "batch: unknown record field", req: request{method: "POST", target: "/v1/topics/orders/produce/batch", body: `{"records":[{"payload":1,"partitoin":1}]}`}, want: 400, says: `record 0: invalid JSON body: unknown field "partitoin"`},
	{name: "batch: record not an object", req: request{method: "POST", target: "/v1/topics/orders/produce/batch", body: `{"records":[{"payload":1},7]}`}, want: 400, says: "record 1:"},
	{name: "batch: NDJSON with no record", req: request{method: "POST", target: "/v1/topics/orders/produce/batch", body: "\n \n",
		header: map[string]string{"Content-Type": "application/x-ndjson"}}, want: 400, says: "holds no record"},
	{name: "batch: NDJSON bad line", req: request{method: "POST", target: "/v1/topics/orders/produce/batch", body: "{\"payload\":1}\n{\"payload\":\n",
		header: map[string]string{"Content-Type": "application/x-ndjson"}}, want: 400, says: "record 1:"},
	// consume and replay
	{name: "consume: unknown parameter", req: request{method: "GET", target: "/v1/topics/orders/consume?limit=3"}, want: 400, says: "wait, partition, offset, max"},
	{name: "consume: negative wait", req: request{method: "GET", target: "/v1/topics/orders/consume?wait=-5"}, want: 400, says: "must not be negative"},
	{name: "consume: negative duration", req: request{method: "GET", target: "/v1/topics/orders/consume?wait=-1s"}, want: 400, says: "a duration"},
	{name: "consume: text wait", req: request{method: "GET", target: "/v1/topics/orders/consume?wait=soon"}, want: 400, says: "a duration"},
	{name: "consume: max 0", req: request{method: "GET", target: "/v1/topics/orders/consume?max=0"}, want: 400, says: "max must be 1..1000, got 0"},
	{name: "consume: max 1001", req: request{method: "GET", target: "/v1/topics/orders/consume?max=1001"}, want: 400, says: "max must be 1..1000, got 1001"},
	{name: "consume: max negative", req: request{method: "GET", target: "/v1/topics/orders/consume?max=-1"}, want: 400, says: "max must be 1..1000, got -1"},
	{name: "consume: text max", req: request{method: "GET", target: "/v1/topics/orders/consume?max=all"}, want: 400, says: `max must be an integer 1..1000, got "all"`},
	{name: "consume: text partition", req: request{method: "GET", target: "/v1/topics/orders/consume?partition=a"}, want: 400, says: "non-negative integer"},
	{name: "replay: negative offset", req: request{method: "GET", target: "/v1/topics/orders/consume?partition=0&offset=-1"}, want: 400, says: "non-negative integer"},
	{name: "replay: text offset", req: request{method: "GET", target: "/v1/topics/orders/consume?partition=0&offset=end"}, want: 400, says: "non-negative integer"},
	{name: "consume: zero visibility", req: request{method: "GET", target: "/v1/topics/orders/consume?visibility=0"}, want: 400, says: "visibility must be a duration of 1ms..12h (43200000 ms), got 0s"},
	{name: "consume: negative visibility", req: request{method: "GET", target: "/v1/topics/orders/consume?visibility=-1s"}, want: 400, says: "visibility must be a duration of 1ms..12h (43200000 ms), got -1s"},
	{name: "consume: visibility over 12h", req: request{method: "GET", target: "/v1/topics/orders/consume?visibility=13h"}, want: 400, says: "got 13h"},
	{name: "consume: text visibility", req: request{method: "GET", target: "/v1/topics/orders/consume?visibility=long"}, want: 400, says: `query parameter visibility="long": want a duration of 1ms..12h`},
	// ack, extend, nack
	{name: "ack: unknown parameter", req: request{method: "POST", target: "/v1/topics/orders/ack?receipt_handle=0:0:1&extnd=true"}, want: 400, says: `"extnd"`},
	{name: "ack: bad extend", req: request{method: "POST", target: "/v1/topics/orders/ack?receipt_handle=0:0:1&extend=yes"}, want: 400, says: `"true" (extend) or "0" (nack)`},
	{name: "ack: text extend", req: request{method: "POST", target: "/v1/topics/orders/ack?receipt_handle=0:0:1&extend=abc"}, want: 400, says: `or a duration of 1ms..12h to extend for`},
	{name: "ack: extend false", req: request{method: "POST", target: "/v1/topics/orders/ack?receipt_handle=0:0:1&extend=false"}, want: 400, says: `"true" (extend) or "0" (nack)`},
	{name: "ack: negative extend", req: request{method: "POST", target: "/v1/topics/orders/ack?receipt_handle=0:0:1&extend=-1"}, want: 400, says: "extend must be a duration of 1ms..12h (43200000 ms), got -1ms"},
	{name: "ack: extend over 12h", req: request{method: "POST", target: "/v1/topics/orders/ack?receipt_handle=0:0:1&extend=13h"}, want: 400, says: "extend must be a duration of 1ms..12h (43200000 ms), got 13h"},
	{name: "ack: extend over 12h by 1ms", req: request{method: "POST", target: "/v1/topics/orders/ack?receipt_handle=0:0:1&extend=43200001"}, want: 400, says: "got 12h1ms"},
	{name: "ack: extend under 1ms", req: request{method: "POST", target: "/v1/topics/orders/ack?receipt_handle=0:0:1&extend=500us"}, want: 400, says: "got 500µs"},
	{name: "ack: no handle, no body", req: request{method: "POST", target: "/v1/topics/orders/ack"}, want: 400, says: "receipt_handle is required"},
	{name: "ack batch: malformed", req: request{method: "POST", target: "/v1/topics/orders/ack", body: `{"receipt_handles":[1]}`}, want: 400, says: "want a string"},
	{name: "ack batch: unknown field", req: request{method: "POST", target: "/v1/topics/orders/ack", body: `{"handles":[]}`}, want: 400, says: `"handles"`},
	// children
	{name: "attach: parameter", req: request{method: "POST", target: "/v1/topics/orders/children?child=c", body: `{"child":"c"}`}, want: 400, says: "takes none"},
	{name: "attach: empty body", req: request{method: "POST", target: "/v1/topics/orders/children"}, want: 400, says: "body is empty"},
	{name: "attach: unknown field", req: request{method: "POST", target: "/v1/topics/orders/children", body: `{"child":"c","delay":5}`}, want: 400, says: `"delay"`},
	{name: "list children: parameter", req: request{method: "GET", target: "/v1/topics/orders/children?all=1"}, want: 400, says: "takes none"},
	{name: "detach: parameter", req: request{method: "DELETE", target: "/v1/topics/orders/children/audit?now=1"}, want: 400, says: "takes none"},
	// users
	{name: "users: parameter", req: request{method: "GET", target: "/v1/users?all=1"}, want: 400, says: "takes none"},
	{name: "create user: malformed", req: request{method: "POST", target: "/v1/users", body: `{"username":`}, want: 400, says: "invalid JSON"},
	{name: "create user: unknown field", req: request{method: "POST", target: "/v1/users", body: `{"user":"x"}`}, want: 400, says: `"user"`},
	{name: "set grants: none given", req: request{method: "PUT", target: "/v1/users/bob/grants", body: `{}`}, want: 400, says: "grants is required"},
	// a user's rate limits (docs/http-api.md)
	{name: "create user: negative limit", req: request{method: "POST", target: "/v1/users", body: `{"username":"x","password":"long-enough","limits":{"produce_records_per_s":-1}}`}, want: 400, says: "limits.produce_records_per_s -1"},
	{name: "create user: absurd limit", req: request{method: "POST", target: "/v1/users", body: `{"username":"x","password":"long-enough","limits":{"produce_bytes_per_s":1099511627776}}`}, want: 400, says: "limits.produce_bytes_per_s"},
	{name: "create user: fractional limit", req: request{method: "POST", target: "/v1/users", body: `{"username":"x","password":"long-enough","limits":{"consume_requests_per_s":1.5}}`}, want: 400, says: "limits.consume_requests_per_s 1.5: want a whole number"},
	{name: "create user: unknown limit", req: request{method: "POST", target: "/v1/users", body: `{"username":"x","password":"long-enough","limits":{"requests_per_s":5}}`}, want: 400, says: "limits.requests_per_s is not a limit"},
	{name: "create user: limits not an object", req: request{method: "POST", target: "/v1/users", body: `{"username":"x","password":"long-enough","limits":5}`}, want: 400, says: "limits: want an object"},
	{name: "patch user: nothing to change", req: request{method: "PATCH", target: "/v1/users/bob", body: `{}`}, want: 400, says: "nothing to change"},
	{name: "patch user: unknown field", req: request{method: "PATCH", target: "/v1/users/bob", body: `{"grants":[]}`}, want: 400, says: `"grants"`},
	{name: "patch user: negative limit", req: request{method: "PATCH", target: "/v1/users/bob", body: `{"limits":{"consume_requests_per_s":-5}}`}, want: 400, says: "limits.consume_requests_per_s -5"},
	{name: "patch user: limit as a string", req: request{method: "PATCH", target: "/v1/users/bob", body: `{"limits":{"produce_records_per_s":"5"}}`}, want: 400, says: "limits.produce_records_per_s \"5\""},
	{name: "patch user: limit key twice", req: request{method: "PATCH", target: "/v1/users/bob", body: `{"limits":{"produce_records_per_s":5,"produce_records_per_s":0}}`}, want: 400, says: "given twice"},
	{name: "set password: unknown field", req: request{method: "PUT", target: "/v1/users/bob/password", body: `{"pass":"x"}`}, want: 400, says: `"pass"`},
	// lenient JSON: a key in another case, a key given twice (checkKeys)
	{name: "create: field in another case", req: request{method: "POST", target: "/v1/topics", body: `{"name":"a","Partitions":3}`}, want: 400, says: `unknown field "Partitions" (field names are case-sensitive: did you mean "partitions"?)`},
	{name: "create: field given twice", req: request{method: "POST", target: "/v1/topics", body: `{"name":"a","partitions":3,"partitions":9}`}, want: 400, says: `field "partitions" is given twice`},
	{name: "create: key twice in the schema", req: request{method: "POST", target: "/v1/topics", body: `{"name":"a","schema":{"type":"object","type":"string"}}`}, want: 400, says: `field "schema.type" is given twice`},
	{name: "alter: field in another case", req: request{method: "PATCH", target: "/v1/topics/orders", body: `{"RETENTION_MS":0}`}, want: 400, says: `did you mean "retention_ms"`},
	{name: "attach: remote key twice", req: request{method: "POST", target: "/v1/topics/orders/children", body: `{"child":"c","remote":{"url":"http://a","url":"http://b"}}`}, want: 400, says: `field "remote.url" is given twice`},
	{name: "batch: envelope key twice", req: request{method: "POST", target: "/v1/topics/orders/produce/batch", body: `{"records":[{"payload":1}],"records":[{"payload":2}]}`}, want: 400, says: `field "records" is given twice`},
	{name: "batch: record key twice", req: request{method: "POST", target: "/v1/topics/orders/produce/batch", body: `{"records":[{"payload":1},{"payload":1,"payload":2}]}`}, want: 400, says: `record 1: invalid JSON body: field "payload" is given twice`},
	{name: "batch: record field in another case", req: request{method: "POST", target: "/v1/topics/orders/produce/batch", body: `{"records":[{"Payload":1}]}`}, want: 400, says: `record 0: invalid JSON body: unknown field "Payload"`},
	{name: "batch: headers not an object", req: request{method: "POST", target: "/v1/topics/orders/produce/batch", body: `{"records":[{"payload":1},{"payload":1,"headers":["a"]}]}`}, want: 400, says: `record 1: invalid JSON body: field "headers": want an object, got a JSON array`},
	{name: "batch: header value not a string", req: request{method: "POST", target: "/v1/topics/orders/produce/batch", body: `{"records":[{"payload":1,"headers":{"a":1}}]}`}, want: 400, says: `record 0: invalid JSON body: field "headers": want a string, got a JSON number`},
	{name: "batch: header name twice", req: request{method: "POST", target: "/v1/topics/orders/produce/batch", body: `{"records":[{"payload":1,"headers":{"a":"x","a":"y"}}]}`}, want: 400, says: `record 0: invalid JSON body: field "headers.a" is given twice`},
	{name: "batch: NDJSON headers not an object", req: request{method: "POST", target: "/v1/topics/orders/produce/batch", body: "{\"payload\":1,\"headers\":\"a=b\"}\n",
		header: map[string]string{"Content-Type": "application/x-ndjson"}}, want: 400, says: `record 0: invalid JSON body: field "headers": want an object, got a JSON string`},
	{name: "produce: over 64 headers", req: request{method: "POST", target: "/v1/topics/orders/produce", body: "x", header: manyRequestHeaders(65)}, want: 400, says: "more than 64 Narad-Header-* request headers"},
	{name: "batch: NDJSON key twice", req: request{method: "POST", target: "/v1/topics/orders/produce/batch", body: "{\"payload\":1}\n{\"key\":\"a\",\"key\":\"b\",\"payload\":1}\n",
		header: map[string]string{"Content-Type": "application/x-ndjson"}}, want: 400, says: `record 1: invalid JSON body: field "key" is given twice`},
	{name: "ack batch: key twice", req: request{method: "POST", target: "/v1/topics/orders/ack", body: `{"receipt_handles":["0:0:1"],"receipt_handles":["0:0:2"]}`}, want: 400, says: "given twice"},
	{name: "create user: field in another case", req: request{method: "POST", target: "/v1/users", body: `{"username":"x","Password":"long-enough"}`}, want: 400, says: `did you mean "password"`},
	{name: "set grants: escaped key twice", req: request{method: "PUT", target: "/v1/users/bob/grants", body: `{"grants":[{"action":"produce","\u0061ction":"consume","patterns":["*"]}]}`}, want: 400, says: `field "grants[0].action" is given twice`},
	// lenient queries: a parameter given twice, a query that does not parse
	{name: "consume: wait twice", req: request{method: "GET", target: "/v1/topics/orders/consume?wait=1s&wait=30s"}, want: 400, says: `query parameter "wait" is given 2 times`},
	{name: "produce: key twice", req: request{method: "POST", target: "/v1/topics/orders/produce?key=a&key=b", body: "x"}, want: 400, says: `"key" is given 2 times`},
	{name: "ack: handle twice", req: request{method: "POST", target: "/v1/topics/orders/ack?receipt_handle=0:0:1&receipt_handle=0:0:2"}, want: 400, says: `"receipt_handle" is given 2 times`},
	{name: "list: limit twice", req: request{method: "GET", target: "/v1/topics?limit=5&limit=6"}, want: 400, says: `"limit" is given 2 times`},
	{name: "consume: bad escape", req: request{method: "GET", target: "/v1/topics/orders/consume?wait=%zz"}, want: 400, says: "query string is malformed"},
	{name: "consume: semicolon", req: request{method: "GET", target: "/v1/topics/orders/consume?wait=1s;max=2"}, want: 400, says: "query string is malformed"},
	// cluster operations
	{name: "members: parameter", req: request{method: "GET", target: "/v1/cluster/members?id=n1"}, want: 400, says: "takes none"},
	{name: "decommission: parameter", req: request{method: "POST", target: "/v1/cluster/members/n3/decommission?now=1"}, want: 400, says: "takes none"},
}

// The 413s: bodies over their caps, refused before the data plane.
var tooLarge = []refusalCase{
	{name: "purge: a body over the cap", req: request{method: "POST", target: "/v1/topics/orders/purge", body: "{}", contentLength: 1<<20 + 1}, want: 413, says: "over the cap"},
	{name: "produce: declared", req: request{method: "POST", target: "/v1/topics/orders/produce", body: "x", contentLength: 1<<20 + 1}, want: 413, says: "over the cap of 1048576"},
	{name: "produce: actual, length unknown", req: request{method: "POST", target: "/v1/topics/orders/produce", body: big, contentLength: -1}, want: 413, says: "over the cap of 1048576 bytes"},
	{name: "batch: declared over 16 MiB", req: request{method: "POST", target: "/v1/topics/orders/produce/batch", body: "{}", contentLength: 16<<20 + 1}, want: 413, says: "over the cap"},
	{name: "batch: record over 1 MiB", req: request{method: "POST", target: "/v1/topics/orders/produce/batch", body: `{"records":[{"payload":1},{"payload":` + bigQuote + `}]}`}, want: 413, says: "record 1: payload of 1048577 bytes is over the 1 MiB cap"},
	{name: "batch: over 10,000 records", req: request{method: "POST", target: "/v1/topics/orders/produce/batch", body: manyRecords(10_001)}, want: 413, says: "10001 records is over the cap of 10000"},
	{name: "create topic body", req: request{method: "POST", target: "/v1/topics", body: `{"name":"a","schema":"` + big + `"}`}, want: 413, says: "over the cap"},
	{name: "ack body", req: request{method: "POST", target: "/v1/topics/orders/ack", body: "{}", contentLength: 4<<20 + 1}, want: 413, says: "over the cap"},
	{name: "user body", req: request{method: "POST", target: "/v1/users", body: "{}", contentLength: 64<<10 + 1}, want: 413, says: "over the cap"},
}

// The 401s, 403s and 404s the API decides: credentials, grants, ownership
// and routes.
var deniedRequests = []refusalCase{
	{name: "no credentials", req: request{method: "POST", target: "/v1/topics/orders/produce", body: "x"}, want: 401, says: "credentials", opts: []envOpt{secured}},
	{name: "wrong password", req: request{method: "POST", target: "/v1/topics/orders/produce", body: "x", user: "producer:nope"}, want: 401, says: "credentials", opts: []envOpt{secured}},
	{name: "unknown user", req: request{method: "GET", target: "/v1/topics", user: "eve"}, want: 401, says: "credentials", opts: []envOpt{secured}},
	{name: "no credentials, users", req: request{method: "POST", target: "/v1/users", body: `{"username":"x"}`}, want: 401, says: "credentials", opts: []envOpt{secured}},
	{name: "no credentials, stats history", req: request{method: "GET", target: "/v1/topics/orders/stats/history"}, want: 401, says: "credentials", opts: []envOpt{secured}},
	{name: "no credentials, cluster", req: request{method: "POST", target: "/v1/cluster/members/n3/decommission"}, want: 401, says: "credentials", opts: []envOpt{secured}},
	{name: "produce without the grant", req: request{method: "POST", target: "/v1/topics/orders/produce", body: "x", user: "consumer"}, want: 403, says: `user "consumer" may not produce on topic "orders"`, opts: []envOpt{secured}},
	{name: "batch outside the pattern", req: request{method: "POST", target: "/v1/topics/billing/produce/batch", body: `{"records":[{"payload":1}]}`, user: "producer"}, want: 403, says: "may not produce", opts: []envOpt{secured}},
	{name: "consume without the grant", req: request{method: "GET", target: "/v1/topics/orders/consume", user: "producer"}, want: 403, says: "may not consume", opts: []envOpt{secured}},
	{name: "ack without the grant", req: request{method: "POST", target: "/v1/topics/orders/ack?receipt_handle=0:0:1", user: "producer"}, want: 403, says: "may not consume", opts: []envOpt{secured}},
	{name: "create without the grant", req: request{method: "POST", target: "/v1/topics", body: `{"name":"x"}`, user: "producer"}, want: 403, says: "may not create", opts: []envOpt{secured}},
	{name: "create under a parent not yours", req: request{method: "POST", target: "/v1/topics", body: `{"name":"x","parent":"mine"}`, user: "bob"}, want: 403, says: "only the owner", opts: []envOpt{secured}},
	{name: "alter a topic not yours", req: request{method: "PATCH", target: "/v1/topics/mine", body: `{"retention_ms":0}`, user: "bob"}, want: 403, says: `only the owner of topic "mine"`, opts: []envOpt{secured}},
	{name: "alter as a later user of the owner's name", req: request{method: "PATCH", target: "/v1/topics/mine", body: `{"retention_ms":0}`, user: "reborn"}, want: 403, says: `user "alice" is neither`, opts: []envOpt{secured}},
	{name: "delete a topic not yours", req: request{method: "DELETE", target: "/v1/topics/mine", user: "bob"}, want: 403, says: "only the owner", opts: []envOpt{secured}},
	{name: "purge a topic not yours", req: request{method: "POST", target: "/v1/topics/mine/purge", user: "bob"}, want: 403, says: "only the owner", opts: []envOpt{secured}},
	{name: "purge without any right", req: request{method: "POST", target: "/v1/topics/orders/purge", user: "consumer"}, want: 403, says: "only the owner", opts: []envOpt{secured}},
	{name: "delete a topic nobody owns", req: request{method: "DELETE", target: "/v1/topics/orders", user: "alice"}, want: 403, says: "only the owner", opts: []envOpt{secured}},
	{name: "attach under a parent not yours", req: request{method: "POST", target: "/v1/topics/mine/children", body: `{"child":"orders"}`, user: "bob"}, want: 403, says: "only the owner", opts: []envOpt{secured}},
	{name: "attach a child not yours", req: request{method: "POST", target: "/v1/topics/mine/children", body: `{"child":"orders"}`, user: "alice"}, want: 403, says: `topic "orders"`, opts: []envOpt{secured}},
	{name: "detach a child not yours", req: request{method: "DELETE", target: "/v1/topics/mine/children/orders", user: "alice"}, want: 403, says: "only the owner", opts: []envOpt{secured}},
	{name: "members without root", req: request{method: "GET", target: "/v1/cluster/members", user: "alice"}, want: 403, says: "admin:*", opts: []envOpt{secured}},
	{name: "decommission without root", req: request{method: "POST", target: "/v1/cluster/members/n3/decommission", user: "alice"}, want: 403, says: "admin:*", opts: []envOpt{secured}},
	{name: "redrive without consume on the topic", req: request{method: "POST", target: "/v1/topics/orders/redrive", body: `{"to":"orders2"}`, user: "producer"}, want: 403, says: `may not consume on topic "orders"`, opts: []envOpt{secured}},
	{name: "redrive without produce on to", req: request{method: "POST", target: "/v1/topics/orders/redrive", body: `{"to":"billing"}`, user: "consumer"}, want: 403, says: `may not produce on topic "billing"`, opts: []envOpt{secured}},
	{name: "no route", req: request{method: "GET", target: "/v1/queues"}, want: 404, says: "no route GET /v1/queues"},
	{name: "no route under a topic", req: request{method: "POST", target: "/v1/topics/orders/publish", body: "x"}, want: 404, says: "no route"},
	{name: "no route, secured", req: request{method: "GET", target: "/v1/nothing", user: "alice"}, want: 404, says: "no route", opts: []envOpt{secured}},
}

// overLimit are the 429s of a user over its rate limit, its buckets
// spent beforehand (drained): each is refused before the data plane is
// asked anything.
var overLimit = []refusalCase{
	{name: "produce over the record limit", req: request{method: "POST", target: "/v1/topics/orders/produce", body: "x", user: "limited"}, want: 429, says: "over its produce_records_per_s limit of 2", opts: []envOpt{secured, drained}},
	{name: "batch over the record limit", req: request{method: "POST", target: "/v1/topics/orders/produce/batch", body: `{"records":[{"payload":1}]}`, user: "limited"}, want: 429, says: "nothing of this request was stored", opts: []envOpt{secured, drained}},
	{name: "ndjson batch over the limit", req: request{method: "POST", target: "/v1/topics/orders/produce/batch", body: "{\"payload\":1}\n", user: "limited", header: map[string]string{"Content-Type": "application/x-ndjson"}}, want: 429, says: "limit", opts: []envOpt{secured, drained}},
	{name: "consume over the request limit", req: request{method: "GET", target: "/v1/topics/orders/consume?wait=1s", user: "limited"}, want: 429, says: "over its consume_requests_per_s limit of 1", opts: []envOpt{secured, drained}},
	{name: "replay over the request limit", req: request{method: "GET", target: "/v1/topics/orders/consume?partition=0&offset=3", user: "limited"}, want: 429, says: "consume_requests_per_s", opts: []envOpt{secured, drained}},
}

// drained gives the env a limiter on a clock that stands still, with
// every bucket of the user "limited" spent.
func drained(e *env) {
	lim := ratelimit.New(clock.NewFake(time.Unix(1_800_000_000, 0)))
	p := testPrincipals["limited"]
	rates := p.Limits.Resolve(meta.Rates{})
	lim.Take(p.Name, p.ID, ratelimit.Rates{rates.ProduceRecordsPerS, rates.ProduceBytesPerS, rates.ConsumeRequestsPerS},
		ratelimit.Rates{rates.ProduceRecordsPerS, rates.ProduceBytesPerS, rates.ConsumeRequestsPerS})
	e.opts.Limiter = lim
	e.opts.UserStore = userStore{p.Name: {Name: p.Name, ID: p.ID, Limits: p.Limits}}
}

// TestRefusalsChangeNothing sends every refusal the API makes itself and
// checks the status, the JSON error shape (with WWW-Authenticate on a
// 401), and that no fake behind the API was asked to change anything —
// not even to lease a record or to forward.
func TestRefusalsChangeNothing(t *testing.T) {
	for _, group := range [][]refusalCase{badRequests, tooLarge, deniedRequests, overLimit} {
		for _, c := range group {
			t.Run(fmt.Sprintf("%d %s", c.want, c.name), func(t *testing.T) {
				e := newEnv(t, c.opts...)
				w := e.do(c.req)
				if w.Code != c.want {
					t.Fatalf("%s %s: %d %q, want %d", c.req.method, c.req.target, w.Code, w.Body.String(), c.want)
				}
				if msg := errorBody(t, w); !strings.Contains(msg, c.says) {
					t.Errorf("error %q does not say %q", msg, c.says)
				}
				if got := w.Header().Get("WWW-Authenticate"); (c.want == http.StatusUnauthorized) != (got != "") {
					t.Errorf("WWW-Authenticate %q on a %d", got, c.want)
				}
				if got := w.Header().Get("Retry-After"); (c.want == http.StatusTooManyRequests) != (got != "") {
					t.Errorf("Retry-After %q on a %d", got, c.want)
				}
				if m := e.rec.mutations(); len(m) > 0 {
					t.Errorf("a refused request reached the rooms behind the API: %v", m)
				}
			})
		}
	}
}

// The same refusals in a cluster, on a node that neither leads nor owns
// anything: a request the API refuses is refused here, never forwarded
// (the 400 is the same whoever would have served it).
func TestRefusalsAreNotForwarded(t *testing.T) {
	notLeader := func(e *env) {
		e.cl.leader = false
		for _, topic := range []string{"orders", "mine"} {
			for p := range 3 {
				e.cl.owners[fmt.Sprintf("%s/%d", topic, p)] = "n2"
			}
		}
	}
	for _, c := range badRequests {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, clustered, notLeader)
			w := e.do(c.req)
			if w.Code != c.want {
				t.Fatalf("%s %s: %d %q, want %d", c.req.method, c.req.target, w.Code, w.Body.String(), c.want)
			}
			errorBody(t, w)
			if m := e.rec.mutations(); len(m) > 0 {
				t.Errorf("a refused request was carried out or forwarded: %v", m)
			}
		})
	}
}
