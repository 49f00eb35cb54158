package httpapi

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The HTTP API reference in docs/http-api.md is written by hand; this
// test holds it to the OpenAPI document (openapi.json, itself held to the
// server by the other openapi tests), so the page cannot drift:
//
//   - every operation of the document has a "### `METHOD /path`" section
//     on the page, and every such section is an operation of the document;
//   - a section's status table ("| 404 | ...") lists exactly the
//     operation's responses;
//   - a section's parameter table rows marked "query" list exactly the
//     operation's query parameters.
func TestHTTPDocMatchesOpenAPI(t *testing.T) {
	raw, err := os.ReadFile("../../docs/http-api.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := parseHTTPDoc(string(raw))
	api := openAPIOperations(t)
	if len(api) < 30 {
		t.Fatalf("found %d operations in openapi.json: the reading is wrong", len(api))
	}

	for route, op := range api {
		sec, ok := doc[route]
		if !ok {
			t.Errorf("docs/http-api.md has no section for %s (want a heading \"### `%s`\")", route, route)
			continue
		}
		if !slices.Equal(sec.statuses, op.statuses) {
			t.Errorf("%s: docs/http-api.md lists statuses %v, openapi.json %v", route, sec.statuses, op.statuses)
		}
		if !slices.Equal(sec.query, op.query) {
			t.Errorf("%s: docs/http-api.md lists query parameters %v, openapi.json %v", route, sec.query, op.query)
		}
	}
	for route := range doc {
		if _, ok := api[route]; !ok {
			t.Errorf("docs/http-api.md documents %s, which openapi.json does not have", route)
		}
	}
}

// routeInfo is what the page and the document say of one operation:
// sorted statuses and sorted query parameter names.
type routeInfo struct {
	statuses []string
	query    []string
}

var (
	docRouteHeading = regexp.MustCompile("^### `(GET|POST|PUT|PATCH|DELETE) (/[^`]*)`")
	docStatusRow    = regexp.MustCompile(`^\| (\d{3}) \|`)
	docQueryRow     = regexp.MustCompile("^\\| `([a-z_]+)` \\| query \\|")
)

// parseHTTPDoc reads the page's route sections: each runs from its
// "### `METHOD /path`" heading to the next heading of any level.
func parseHTTPDoc(text string) map[string]routeInfo {
	out := map[string]routeInfo{}
	route := ""
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "#") {
			route = ""
			if m := docRouteHeading.FindStringSubmatch(line); m != nil {
				route = m[1] + " " + m[2]
				out[route] = routeInfo{statuses: []string{}, query: []string{}}
			}
			continue
		}
		if route == "" {
			continue
		}
		info := out[route]
		if m := docStatusRow.FindStringSubmatch(line); m != nil {
			info.statuses = append(info.statuses, m[1])
		}
		if m := docQueryRow.FindStringSubmatch(line); m != nil {
			info.query = append(info.query, m[1])
		}
		out[route] = info
	}
	for route, info := range out {
		slices.Sort(info.statuses)
		slices.Sort(info.query)
		out[route] = info
	}
	return out
}

// openAPIOperations reads every operation of the embedded document.
// Query parameters are inline in it; the shared (referenced) parameters
// are all path parameters, so a $ref is not followed.
func openAPIOperations(t *testing.T) map[string]routeInfo {
	t.Helper()
	var d struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(openAPIDocument, &d); err != nil {
		t.Fatal(err)
	}
	out := map[string]routeInfo{}
	for path, item := range d.Paths {
		for method, raw := range item {
			if method == "parameters" {
				continue
			}
			var op struct {
				Parameters []struct {
					Name string `json:"name"`
					In   string `json:"in"`
				} `json:"parameters"`
				Responses map[string]json.RawMessage `json:"responses"`
			}
			if err := json.Unmarshal(raw, &op); err != nil {
				t.Fatalf("%s %s: %v", method, path, err)
			}
			info := routeInfo{statuses: []string{}, query: []string{}}
			for status := range op.Responses {
				info.statuses = append(info.statuses, status)
			}
			for _, p := range op.Parameters {
				if p.In == "query" {
					info.query = append(info.query, p.Name)
				}
			}
			slices.Sort(info.statuses)
			slices.Sort(info.query)
			out[strings.ToUpper(method)+" "+path] = info
		}
	}
	return out
}
