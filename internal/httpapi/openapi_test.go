package httpapi

import (
	"bytes"
	"encoding/json"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// specStatuses is every status each route can answer, from the status
// table and the route sections of docs/http-api.md (and docs/security.md for
// users): 400 and 401 anywhere in /v1 (every route refuses unknown query
// parameters; every route but the document needs credentials), 403 where
// a grant or ownership is checked, 404 where a named thing may be
// missing, 409/410 where the spec says, 413 wherever a body is read, 503
// where the answer needs the leader, a partition's owner or a free disk.
// Any route may also answer 500 (an internal failure), which the document
// says once, in its description. 429 where a user's rate limit applies
// (docs/http-api.md: produce, batch produce, consume).
var specStatuses = map[string][]int{
	"POST /v1/topics":                              {201, 400, 401, 403, 404, 409, 413, 503},
	"GET /v1/topics":                               {200, 400, 401},
	"GET /v1/topics/{topic}":                       {200, 400, 401, 404},
	"PATCH /v1/topics/{topic}":                     {200, 400, 401, 403, 404, 409, 413, 503},
	"DELETE /v1/topics/{topic}":                    {204, 400, 401, 403, 404, 409, 503}, // 409: named as a dead_letter_topic (docs/concepts.md, "Dead letters")
	"POST /v1/topics/{topic}/produce":              {202, 400, 401, 403, 404, 409, 413, 429, 503},
	"POST /v1/topics/{topic}/produce/batch":        {202, 400, 401, 403, 404, 409, 413, 415, 429, 503}, // 415: a Content-Type of no batch format (the binary format is an extension)
	"GET /v1/topics/{topic}/consume":               {200, 204, 400, 401, 403, 404, 429, 503},
	"POST /v1/topics/{topic}/ack":                  {200, 204, 400, 401, 403, 404, 410, 413, 503},
	"POST /v1/topics/{topic}/purge":                {200, 400, 401, 403, 404, 413, 503},
	"GET /v1/topics/{topic}/stats/history":         {200, 400, 401, 404},
	"GET /v1/topics/{topic}/offsets":               {200, 400, 401, 403, 404, 503},
	"GET /v1/topics/{topic}/replay":                {200, 400, 401, 403, 404, 429, 503},
	"POST /v1/topics/{topic}/redrive":              {200, 400, 401, 403, 404, 409, 413, 503}, // docs/concepts.md, "Redrive and purge"; 409: to is a delay child
	"GET /v1/topics/{topic}/children":              {200, 400, 401, 404},
	"POST /v1/topics/{topic}/children":             {200, 400, 401, 403, 404, 409, 413, 503},
	"DELETE /v1/topics/{topic}/children/{child}":   {204, 400, 401, 403, 404, 503},
	"PATCH /v1/topics/{topic}/children/{child}":    {200, 400, 401, 403, 404, 409, 413, 503}, // 409: re-attached meanwhile
	"POST /v1/users":                               {201, 400, 401, 403, 409, 413, 503},
	"GET /v1/users":                                {200, 400, 401, 403},
	"GET /v1/users/{name}":                         {200, 400, 401, 403, 404},
	"PATCH /v1/users/{name}":                       {200, 400, 401, 403, 404, 413, 503}, // the user's rate limits (docs/http-api.md)
	"DELETE /v1/users/{name}":                      {204, 400, 401, 403, 404, 409, 503},
	"PUT /v1/users/{name}/grants":                  {200, 400, 401, 403, 404, 413, 503},
	"PUT /v1/users/{name}/password":                {204, 400, 401, 403, 404, 413, 503},
	"POST /v1/users/{name}/access-keys":            {201, 400, 401, 403, 404, 409, 503},
	"GET /v1/users/{name}/access-keys":             {200, 400, 401, 403, 404},
	"DELETE /v1/users/{name}/access-keys/{id}":     {204, 400, 401, 403, 404, 503},
	"GET /v1/cluster/members":                      {200, 400, 401, 403},
	"GET /v1/cluster/moves":                        {200, 400, 401, 403},
	"POST /v1/cluster/members/{id}/decommission":   {200, 400, 401, 403, 404, 503},
	"DELETE /v1/cluster/members/{id}/decommission": {200, 400, 401, 403, 404, 503},
	"GET /v1/openapi.json":                         {200, 400},
	"GET /healthz":                                 {200},
	"GET /readyz":                                  {200, 503},
	"GET /metrics":                                 {200},
}

// The document is JSON and a valid OpenAPI 3.1 document: it validates
// against the OpenAPI Initiative's published schema for 3.1 documents
// (testdata/openapi-3.1-schema-2022-10-07.json, from
// https://spec.openapis.org/oas/3.1/schema/2022-10-07), and every schema
// in it compiles as JSON Schema 2020-12 with each $ref resolved.
func TestOpenAPIDocumentIsValidOpenAPI31(t *testing.T) {
	meta, err := jsonschema.UnmarshalJSON(bytes.NewReader(readFile(t, "testdata/openapi-3.1-schema-2022-10-07.json")))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	const metaURL = "https://spec.openapis.org/oas/3.1/schema/2022-10-07"
	if err := c.AddResource(metaURL, meta); err != nil {
		t.Fatal(err)
	}
	oas, err := c.Compile(metaURL)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(openAPIDocument))
	if err != nil {
		t.Fatalf("openapi.json is not JSON: %v", err)
	}
	if err := oas.Validate(doc); err != nil {
		t.Fatalf("openapi.json is not a valid OpenAPI 3.1 document:\n%v", err)
	}
	// The meta-schema leaves Schema Objects and $refs unchecked: compile
	// every schema where it stands.
	n := 0
	walkSchemas(doc, "", func(pointer string) {
		n++
		if _, err := schemaAt(pointer); err != nil {
			t.Errorf("schema at %s: %v", pointer, err)
		}
	})
	if n < 40 {
		t.Fatalf("found %d schemas in the document: the walk is looking in the wrong place", n)
	}
	loadDoc(t) // and every parameter $ref resolves
}

// walkSchemas calls f with the JSON pointer of every Schema Object of an
// OpenAPI document: components.schemas entries and every "schema" member
// of parameters, headers and media types.
func walkSchemas(v any, at string, f func(string)) {
	switch v := v.(type) {
	case map[string]any:
		for k, sub := range v {
			p := at + "/" + strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
			switch {
			case k == "schema" && !strings.HasPrefix(at, "/components/schemas"):
				f(p)
			case at == "/components/schemas":
				f(p)
			case k == "examples" || k == "example":
			default:
				walkSchemas(sub, p, f)
			}
		}
	case []any:
		for i, sub := range v {
			walkSchemas(sub, at+"/"+strconv.Itoa(i), f)
		}
	}
}

// Every route the server registers is in the document, and the document
// has no route the server does not register (method and path pattern,
// exactly as net/http's ServeMux has them).
func TestOpenAPIHasEveryRouteAndNoOther(t *testing.T) {
	e := newEnv(t) // users and cluster operations on: every route there is
	d := loadDoc(t)
	for _, p := range e.s.routes {
		if d.routes[p] == nil {
			t.Errorf("the server serves %s; the document does not describe it", p)
		}
	}
	for key := range d.routes {
		if !slices.Contains(e.s.routes, key) {
			t.Errorf("the document describes %s; the server has no such route", key)
		}
	}
	if len(e.s.routes) < 25 {
		t.Fatalf("the server's route table has %d routes: it is not being recorded", len(e.s.routes))
	}
}

// Every /v1 route refuses a query parameter it does not take (the API's
// rule), and the ones it takes are exactly the ones the document lists:
// the route itself is asked, with a parameter no route takes, and names
// what it takes in its refusal. Outside /v1 (probes, metrics) nothing is
// parsed and nothing is documented.
func TestOpenAPIQueryParametersAreTheRoutes(t *testing.T) {
	e := newEnv(t)
	d := loadDoc(t)
	for _, r := range d.routes {
		if !strings.HasPrefix(r.path, "/v1/") {
			if len(r.query) != 0 {
				t.Errorf("%s documents query parameters %v; it parses none", r.key, r.query)
			}
			continue
		}
		w := e.do(request{method: r.method, target: r.concrete() + "?zz_probe=1"})
		msg := ""
		if w.Code == 400 {
			msg = errorBody(t, w)
		}
		takes, ok := takenParams(msg)
		if !ok {
			t.Errorf("%s?zz_probe=1: %d %q, want 400 refusing the unknown parameter", r.key, w.Code, w.Body.String())
			continue
		}
		if !slices.Equal(takes, r.query) {
			t.Errorf("%s takes query parameters %v; the document lists %v", r.key, takes, r.query)
		}
	}
}

// takenParams reads the parameters a route takes from its refusal of
// zz_probe (respond.go, onlyParams).
func takenParams(msg string) ([]string, bool) {
	rest, ok := strings.CutPrefix(msg, `unknown query parameter "zz_probe"`)
	if !ok {
		return nil, false
	}
	if rest == ": this route takes none" {
		return []string{}, true
	}
	list, ok := strings.CutPrefix(rest, " (this route takes ")
	if !ok || !strings.HasSuffix(list, ")") {
		return nil, false
	}
	out := strings.Split(strings.TrimSuffix(list, ")"), ", ")
	sort.Strings(out)
	return out, true
}

// Each route documents exactly the statuses docs/http-api.md gives it.
func TestOpenAPIStatusesAreTheSpecs(t *testing.T) {
	d := loadDoc(t)
	for key, want := range specStatuses {
		r := d.routes[key]
		if r == nil {
			t.Errorf("%s: not in the document", key)
			continue
		}
		if got := r.statuses(); !slices.Equal(got, want) {
			t.Errorf("%s documents statuses %v; docs/http-api.md gives %v", key, got, want)
		}
	}
	for key := range d.routes {
		if specStatuses[key] == nil {
			t.Errorf("%s: no statuses in specStatuses (add the route's row from the spec)", key)
		}
	}
}

// The error shape, Retry-After, WWW-Authenticate and authentication are
// said the same way everywhere: every 4xx/5xx is the Error schema, every
// 503 of /v1 carries Retry-After, every 401 WWW-Authenticate; /v1 routes
// need Basic credentials, except the document itself, and the routes
// outside /v1 need none.
func TestOpenAPISaysTheCommonRulesEverywhere(t *testing.T) {
	d := loadDoc(t)
	var doc struct {
		Security []map[string][]any `json:"security"`
	}
	json.Unmarshal(openAPIDocument, &doc)
	if len(doc.Security) != 1 || doc.Security[0]["basicAuth"] == nil {
		t.Fatalf("the document's default security is %v, want HTTP Basic", doc.Security)
	}
	var errSchema map[string]any
	json.Unmarshal(d.Components.Schemas["Error"], &errSchema)
	if errSchema["additionalProperties"] != false {
		t.Errorf("the Error schema admits fields other than error and index")
	}
	for _, r := range d.routes {
		public := !strings.HasPrefix(r.path, "/v1/") || r.path == "/v1/openapi.json"
		if gotPublic := r.op.Security != nil && len(*r.op.Security) == 0; gotPublic != public {
			t.Errorf("%s: needs no credentials = %v, want %v", r.key, gotPublic, public)
		}
		if !public && r.op.Responses["401"].Ref == "" {
			t.Errorf("%s: needs credentials but documents no 401", r.key)
		}
		for code, resp := range r.op.Responses {
			resp, _ := d.resolveResponse(resp)
			if code >= "400" && r.path != "/readyz" {
				c, ok := resp.Content["application/json"]
				if !ok || string(c.Schema) != `{"$ref":"#/components/schemas/Error"}` && !strings.Contains(string(c.Schema), `"#/components/schemas/Error"`) {
					t.Errorf("%s %s: the error answer is not the Error schema", r.key, code)
				}
			}
			if code == "503" && strings.HasPrefix(r.path, "/v1/") && resp.Headers["Retry-After"] == nil {
				t.Errorf("%s 503: no Retry-After header", r.key)
			}
			if code == "401" && resp.Headers["WWW-Authenticate"] == nil {
				t.Errorf("%s 401: no WWW-Authenticate header", r.key)
			}
		}
	}
}

// GET /v1/openapi.json serves the embedded document, to anyone, even
// with security on, and refuses parameters like every /v1 route.
func TestOpenAPIDocumentIsServedWithoutCredentials(t *testing.T) {
	e := newEnv(t, secured)
	w := e.do(request{method: "GET", target: "/v1/openapi.json"})
	if w.Code != 200 || w.Header().Get("Content-Type") != "application/json" || !bytes.Equal(w.Body.Bytes(), openAPIDocument) {
		t.Fatalf("GET /v1/openapi.json: %d %q, %d bytes", w.Code, w.Header().Get("Content-Type"), w.Body.Len())
	}
	if w := e.do(request{method: "GET", target: "/v1/openapi.json?format=yaml"}); w.Code != 400 {
		t.Fatalf("an unknown parameter: %d %q", w.Code, w.Body.String())
	}
	if w := e.do(request{method: "GET", target: "/v1/topics"}); w.Code != 401 {
		t.Fatalf("the rest of /v1 still needs credentials: %d", w.Code)
	}
	if len(e.rec.calls) != 0 {
		t.Fatalf("serving the document reached the rooms: %v", e.rec.calls)
	}
}
