package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The OpenAPI document as the route tests read it: operations by
// "METHOD /path", with their query parameters and response statuses.

// docURL names the embedded document for the schema compiler.
const docURL = "mem://narad/openapi.json"

type oaParam struct {
	Ref  string `json:"$ref"`
	Name string `json:"name"`
	In   string `json:"in"`
}

type oaResponse struct {
	Ref     string                     `json:"$ref"`
	Headers map[string]json.RawMessage `json:"headers"`
	Content map[string]struct {
		Schema json.RawMessage `json:"schema"`
	} `json:"content"`
}

type oaOperation struct {
	OperationID string                `json:"operationId"`
	Parameters  []oaParam             `json:"parameters"`
	Responses   map[string]oaResponse `json:"responses"`
	Security    *[]map[string][]any   `json:"security"`
}

// oaRoute is one operation, with the path item's parameters merged in.
type oaRoute struct {
	key     string // "GET /v1/topics/{topic}", a ServeMux pattern
	method  string
	path    string
	op      oaOperation
	query   []string // query parameter names, sorted
	pointer string   // JSON pointer of the operation in the document
}

type oaDoc struct {
	Paths      map[string]map[string]json.RawMessage `json:"paths"`
	Components struct {
		Parameters map[string]oaParam         `json:"parameters"`
		Responses  map[string]oaResponse      `json:"responses"`
		Schemas    map[string]json.RawMessage `json:"schemas"`
	} `json:"components"`
	routes map[string]*oaRoute
}

var methods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// loadDoc parses the embedded document. It fails the test on anything a
// reader of the document could not use.
func loadDoc(t *testing.T) *oaDoc {
	t.Helper()
	d, err := parseDoc(openAPIDocument)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func parseDoc(raw []byte) (*oaDoc, error) {
	var d oaDoc
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&d); err != nil {
		return nil, fmt.Errorf("openapi.json is not JSON: %v", err)
	}
	d.routes = map[string]*oaRoute{}
	for path, item := range d.Paths {
		var shared []oaParam
		if p, ok := item["parameters"]; ok {
			if err := json.Unmarshal(p, &shared); err != nil {
				return nil, fmt.Errorf("%s parameters: %v", path, err)
			}
		}
		for _, m := range methods {
			raw, ok := item[m]
			if !ok {
				continue
			}
			r := &oaRoute{method: strings.ToUpper(m), path: path,
				pointer: "/paths/" + strings.ReplaceAll(strings.ReplaceAll(path, "~", "~0"), "/", "~1") + "/" + m}
			r.key = r.method + " " + path
			if err := json.Unmarshal(raw, &r.op); err != nil {
				return nil, fmt.Errorf("%s: %v", r.key, err)
			}
			for _, p := range append(slices.Clone(shared), r.op.Parameters...) {
				p, err := d.resolveParam(p)
				if err != nil {
					return nil, fmt.Errorf("%s: %v", r.key, err)
				}
				if p.In == "query" {
					r.query = append(r.query, p.Name)
				}
			}
			sort.Strings(r.query)
			d.routes[r.key] = r
		}
	}
	return &d, nil
}

func (d *oaDoc) resolveParam(p oaParam) (oaParam, error) {
	if p.Ref == "" {
		return p, nil
	}
	name, ok := strings.CutPrefix(p.Ref, "#/components/parameters/")
	q, found := d.Components.Parameters[name]
	if !ok || !found {
		return p, fmt.Errorf("parameter $ref %q does not resolve", p.Ref)
	}
	return q, nil
}

func (d *oaDoc) resolveResponse(r oaResponse) (oaResponse, string) {
	if name, ok := strings.CutPrefix(r.Ref, "#/components/responses/"); ok {
		return d.Components.Responses[name], "/components/responses/" + name
	}
	return r, ""
}

// statuses is the operation's documented statuses ("default" aside).
func (r *oaRoute) statuses() []int {
	var out []int
	for code := range r.op.Responses {
		if n, err := strconv.Atoi(code); err == nil {
			out = append(out, n)
		}
	}
	sort.Ints(out)
	return out
}

// concrete is r's path with every wildcard filled with a name the test
// env knows.
func (r *oaRoute) concrete() string {
	return strings.NewReplacer("{topic}", "orders", "{child}", "orders-an", "{name}", "billing", "{id}", "n3").Replace(r.path)
}

// compiler compiles the document's schemas (draft 2020-12, the dialect of
// an OpenAPI 3.1 document), $refs between them resolved in place.
var compiler = sync.OnceValues(func() (*jsonschema.Compiler, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(openAPIDocument))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(docURL, doc); err != nil {
		return nil, err
	}
	return c, nil
})

var compiled sync.Map // JSON pointer -> *jsonschema.Schema

// schemaAt compiles the schema at pointer in the document.
func schemaAt(pointer string) (*jsonschema.Schema, error) {
	if s, ok := compiled.Load(pointer); ok {
		return s.(*jsonschema.Schema), nil
	}
	c, err := compiler()
	if err != nil {
		return nil, err
	}
	s, err := c.Compile(docURL + "#" + pointer)
	if err != nil {
		return nil, err
	}
	compiled.Store(pointer, s)
	return s, nil
}

// responseSchema is the pointer of the JSON schema documented for status
// of r ("" when the answer has no JSON body).
func (d *oaDoc) responseSchema(r *oaRoute, status int) string {
	code := strconv.Itoa(status)
	resp, ok := r.op.Responses[code]
	if !ok {
		return ""
	}
	base := r.pointer + "/responses/" + code
	resp, at := d.resolveResponse(resp)
	if at != "" {
		base = at
	}
	if c, ok := resp.Content["application/json"]; ok && c.Schema != nil {
		return base + "/content/application~1json/schema"
	}
	return ""
}

// validateJSON validates a JSON answer against the schema at pointer.
func validateJSON(pointer string, body []byte) error {
	s, err := schemaAt(pointer)
	if err != nil {
		return fmt.Errorf("compiling %s: %v", pointer, err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("not JSON: %v", err)
	}
	return s.Validate(v)
}

// readFile is a testdata file.
func readFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
