package httpapi

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// The document names where its API is (issue 29: generic tools — code
// generators, API consoles, linters — want servers): first the node that
// served it (a relative URL, which a tool resolves against where it
// fetched the document), then any node, as a URL template whose default
// is the CLI's default address.
func TestOpenAPIDocumentNamesItsServers(t *testing.T) {
	var doc struct {
		Servers []struct {
			URL       string `json:"url"`
			Variables map[string]struct {
				Default string   `json:"default"`
				Enum    []string `json:"enum"`
			} `json:"variables"`
		} `json:"servers"`
	}
	if err := json.Unmarshal(openAPIDocument, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Servers) != 2 || doc.Servers[0].URL != "/" {
		t.Fatalf("servers %+v: want the serving node (\"/\") first, then a template", doc.Servers)
	}
	tmpl := doc.Servers[1]
	url := tmpl.URL
	for name, v := range tmpl.Variables {
		if v.Default == "" || len(v.Enum) > 0 && !slices.Contains(v.Enum, v.Default) {
			t.Errorf("variable %s: default %q not among %v", name, v.Default, v.Enum)
		}
		url = strings.ReplaceAll(url, "{"+name+"}", v.Default)
	}
	if url != "http://127.0.0.1:7942" {
		t.Errorf("template %q expands by default to %q, want the CLI's default http://127.0.0.1:7942", tmpl.URL, url)
	}
}
