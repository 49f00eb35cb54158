package schema

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

const orderSchema = `{
	"type": "object",
	"required": ["id"],
	"properties": {
		"id": {"type": "integer"},
		"price": {"type": "number"},
		"tags": {"type": "array", "items": {"type": "string"}}
	}
}`

func TestCompile(t *testing.T) {
	tests := []struct {
		name string
		raw  string
		want string // "" compiles; else the exact error message
	}{
		{"object 2020-12", orderSchema, ""},
		{"boolean true", `true`, ""},
		{"boolean false", `false`, ""},
		{"draft-07 definitions", `{"$schema":"http://json-schema.org/draft-07/schema#","definitions":{"s":{"type":"string"}},"properties":{"a":{"$ref":"#/definitions/s"}}}`, ""},
		{"draft-04", `{"$schema":"http://json-schema.org/draft-04/schema#","type":"object","required":["a"]}`, ""},
		{"recursive local ref", `{"$defs":{"n":{"properties":{"next":{"$ref":"#/$defs/n"}}}},"$ref":"#/$defs/n"}`, ""},
		{"anchor ref", `{"$defs":{"s":{"$anchor":"S","type":"string"}},"$ref":"#S"}`, ""},
		{"standard meta-schema ref is embedded", `{"$ref":"http://json-schema.org/draft-07/schema#"}`, ""},

		{"not JSON", `{"type":`, "not JSON: unexpected EOF"},
		{"empty", "  ", "not JSON: empty"},
		{"trailing data", `{} {}`, "not JSON: invalid character after top-level value"},
		{"array document", `[]`, "not a schema: the document must be a JSON object or boolean, got an array"},
		{"string document", `"x"`, "not a schema: the document must be a JSON object or boolean, got a string"},
		{"type not a string", `{"properties":{"a":{"type":5}}}`, "not a valid schema: at '/properties/a/type': value must be one of 'array', 'boolean', 'integer', 'null', 'number', 'object', 'string' (and 1 more error)"},
		{"properties not an object", `{"properties":[]}`, "not a valid schema: at '/properties': got array, want object"},
		{"required not an array", `{"required":"id"}`, "not a valid schema: at '/required': got string, want array"},
		{"negative minLength", `{"minLength":-1}`, "not a valid schema: at '/minLength': minimum: got -1, want 0"},
		{"draft-04 empty required", `{"$schema":"http://json-schema.org/draft-04/schema#","required":[]}`, "not a valid schema: at '/required': minItems: got 0, want 1"},
		{"non-RE2 pattern", `{"pattern":"(?=x)"}`, "not a valid schema: at '/pattern': '(?=x)' is not valid regex: error parsing regexp: invalid or unsupported Perl syntax: `(?=`"},
		{"missing local pointer", `{"$ref":"#/$defs/nope"}`, `unresolvable $ref: "#/$defs/nope" not found in the document`},
		{"missing anchor", `{"$ref":"#nope"}`, `unresolvable $ref: anchor "#nope" not found in the document`},
		{"remote ref", `{"$ref":"https://example.com/s.json"}`, `unresolvable reference "https://example.com/s.json": ` + errNotFetched.Error()},
		{"unknown meta-schema", `{"$schema":"https://example.com/meta"}`, `unresolvable reference "https://example.com/meta": ` + errNotFetched.Error()},
		{"relative ref is not the document itself", `{"$ref":"other.json"}`, `unresolvable reference "narad://topic/other.json": ` + errNotFetched.Error()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Compile([]byte(tt.raw))
			if tt.want == "" {
				if err != nil || s == nil {
					t.Fatalf("Compile: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Compile succeeded, want %q", tt.want)
			}
			if !errors.Is(err, ErrInvalidSchema) {
				t.Errorf("error %v does not wrap ErrInvalidSchema", err)
			}
			if err.Error() != tt.want {
				t.Errorf("error\n got %q\nwant %q", err.Error(), tt.want)
			}
		})
	}
}

// TestCompileFetchesNothing offers the loader a reachable, valid schema by
// every route: if any of them were loaded, Compile would succeed.
func TestCompileFetchesNothing(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/schema+json")
		_, _ = w.Write([]byte(`{"type":"string"}`))
	}))
	defer srv.Close()

	dir := t.TempDir()
	file := filepath.Join(dir, "s.json")
	if err := os.WriteFile(file, []byte(`{"type":"string"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir) // a relative ref resolved against the working directory would find s.json

	for _, raw := range []string{
		`{"$ref":"` + srv.URL + `/s.json"}`,
		`{"$schema":"` + srv.URL + `/meta.json"}`,
		`{"$id":"` + srv.URL + `/root.json","$ref":"s.json"}`,
		`{"$ref":"file://` + filepath.ToSlash(file) + `"}`,
		`{"$ref":"s.json"}`,
		`{"properties":{"a":{"$ref":"s.json#/type"}}}`,
	} {
		_, err := Compile([]byte(raw))
		if err == nil || !strings.Contains(err.Error(), errNotFetched.Error()) {
			t.Errorf("Compile(%s) = %v, want a refused reference", raw, err)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("server got %d requests, want 0", n)
	}
}

func mustCompile(t testing.TB, raw string) *Schema {
	t.Helper()
	s, err := Compile([]byte(raw))
	if err != nil {
		t.Fatalf("Compile(%s): %v", raw, err)
	}
	return s
}

func TestValidate(t *testing.T) {
	bigMax := `{"type":"integer","maximum":9007199254740993}`
	refs := `{"$defs":{"pos":{"type":"integer","minimum":1}},"properties":{"qty":{"$ref":"#/$defs/pos"}}}`
	tests := []struct {
		name, schema, payload string
		want                  string // "" valid; else the exact error message
	}{
		{"valid", orderSchema, `{"id":1,"price":2.5,"tags":["a"]}`, ""},
		{"valid with extra property", orderSchema, `{"id":1,"note":"x"}`, ""},
		{"missing required", orderSchema, `{"price":1}`, "at '': missing property 'id'"},
		{"wrong type", orderSchema, `{"id":"1"}`, "at '/id': got string, want integer"},
		{"not an object", orderSchema, `[1]`, "at '': got array, want object"},
		{"two errors: the outer one, counted", orderSchema, `{"price":"x"}`, "at '': missing property 'id' (and 1 more error)"},
		{"array indices in numeric order", orderSchema, `{"id":1,"tags":["a","a","a","a","a","a","a","a","a",9,10]}`, "at '/tags/9': got number, want string (and 1 more error)"},
		{"through a local $ref", refs, `{"qty":0}`, "at '/qty': minimum: got 0, want 1"},
		{"integer above 2^53 kept exact: valid", bigMax, `9007199254740993`, ""},
		{"integer above 2^53 kept exact: invalid", bigMax, `9007199254740994`, "at '': maximum: got 9.007199254740994×10¹⁵, want 9.007199254740992×10¹⁵"}, // the library prints rounded; the check is exact
		{"true accepts anything", `true`, `"x"`, ""},
		{"false rejects everything", `false`, `null`, "at '': false schema"},
		{"empty body", orderSchema, ``, "body is not JSON: empty"},
		{"truncated body", orderSchema, `{"id":`, "body is not JSON: unexpected EOF"},
		{"bare word", orderSchema, `hello`, "body is not JSON: invalid character 'h' looking for beginning of value"},
		{"two values", orderSchema, `{"id":1} {"id":2}`, "body is not JSON: invalid character after top-level value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := mustCompile(t, tt.schema).Validate([]byte(tt.payload))
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate succeeded, want %q", tt.want)
			}
			if !errors.Is(err, ErrInvalidPayload) {
				t.Errorf("error %v does not wrap ErrInvalidPayload", err)
			}
			if err.Error() != tt.want {
				t.Errorf("error\n got %q\nwant %q", err.Error(), tt.want)
			}
		})
	}
}

// TestValidateMessageIsStable: the library gathers sibling errors in map
// order, so without a deterministic choice the message would vary between
// runs of the same body.
func TestValidateMessageIsStable(t *testing.T) {
	s := mustCompile(t, `{"properties":{"a":{"type":"string"},"b":{"type":"string"},"c":{"type":"string"},"d":{"type":"string"},"e":{"type":"string"},"f":{"type":"string"}}}`)
	const want = "at '/a': got number, want string (and 5 more errors)"
	for i := 0; i < 50; i++ {
		err := s.Validate([]byte(`{"f":1,"e":1,"d":1,"c":1,"b":1,"a":1}`))
		if err == nil || err.Error() != want {
			t.Fatalf("run %d: got %v, want %q", i, err, want)
		}
	}
}

// largeOrders builds a JSON array of n order objects, about 60 bytes each.
func largeOrders(n int, bad int) []byte {
	var b strings.Builder
	b.WriteByte('[')
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		if i == bad {
			b.WriteString(`{"id":"oops","price":1.25,"tags":["red","blue"]}`)
			continue
		}
		b.WriteString(`{"id":12345,"price":1.25,"tags":["red","blue","green"]}`)
	}
	b.WriteByte(']')
	return []byte(b.String())
}

func TestValidateLargeBody(t *testing.T) {
	s := mustCompile(t, `{"type":"array","items":`+orderSchema+`}`)
	const n = 18000 // just under 1 MiB
	ok := largeOrders(n, -1)
	if len(ok) < 900<<10 || len(ok) > 1<<20 {
		t.Fatalf("body is %d bytes, want close to 1 MiB", len(ok))
	}
	if err := s.Validate(ok); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	err := s.Validate(largeOrders(n, n-1))
	if want := "at '/17999/id': got string, want integer"; err == nil || err.Error() != want {
		t.Fatalf("got %v, want %q", err, want)
	}
}
