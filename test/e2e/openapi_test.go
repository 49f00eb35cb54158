package e2e

import (
	"encoding/json"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// The package tests of internal/httpapi hold the document to the route
// table, the spec's statuses and every answer they see, on a server built
// with fakes. What only a real node shows is checked here: the binary
// serves the document to a caller without credentials, it parses as
// OpenAPI 3.1, and the node's wiring has every route the document
// describes, each asking for credentials exactly where the document says.
func TestOpenAPIDocumentIsServedByARealNode(t *testing.T) {
	n := startSecureNode(t)
	a := asUser(t, n, "", "", "GET", "/v1/openapi.json", nil)
	if a.status != http.StatusOK || a.hdr.Get("Content-Type") != "application/json" {
		t.Fatalf("GET /v1/openapi.json without credentials: %s", a)
	}
	var doc struct {
		OpenAPI string                                `json:"openapi"`
		Paths   map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(a.body, &doc); err != nil {
		t.Fatalf("the served document is not JSON: %v", err)
	}
	if doc.OpenAPI != "3.1.0" {
		t.Fatalf("the served document says openapi %q, want 3.1.0", doc.OpenAPI)
	}

	param := regexp.MustCompile(`\{[^}]+\}`)
	var routes []string
	for path, item := range doc.Paths {
		for method, raw := range item {
			if method == "parameters" || method == "summary" || method == "description" {
				continue
			}
			var op struct {
				Security *[]any `json:"security"`
			}
			if err := json.Unmarshal(raw, &op); err != nil {
				t.Fatalf("%s %s: %v", method, path, err)
			}
			routes = append(routes, strings.ToUpper(method)+" "+path)
			public := op.Security != nil && len(*op.Security) == 0
			target := param.ReplaceAllString(path, "x1")
			got := asUser(t, n, "", "", strings.ToUpper(method), target, nil)
			// A route the node lacks answers 404 or 405 without asking
			// who is calling; one it has asks (401) unless it is public.
			if public && got.status == http.StatusUnauthorized || !public && got.status != http.StatusUnauthorized {
				t.Errorf("%s %s (public in the document: %v): %s", method, path, public, got)
			}
		}
	}
	sort.Strings(routes)
	if len(routes) < 25 {
		t.Fatalf("the served document has %d routes: %v", len(routes), routes)
	}
}
