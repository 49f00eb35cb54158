package httpapi

import (
	"slices"
	"strings"
	"testing"
)

// A method a documented path does not take is 405 with Allow, and Allow
// lists exactly the methods the document gives the path (HEAD wherever
// GET is).
func TestOpenAPIMethodsOfAPathAreItsAllow(t *testing.T) {
	e := newEnv(t)
	d := loadDoc(t)
	paths, concrete := map[string][]string{}, map[string]string{}
	for _, r := range d.routes {
		paths[r.path] = append(paths[r.path], r.method)
		concrete[r.path] = r.concrete()
	}
	if d.Components.Responses["MethodNotAllowed"].Headers["Allow"] == nil {
		t.Fatal("the document has no MethodNotAllowed response with Allow")
	}
	order := []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"}
	for path, ms := range paths {
		var want []string
		for _, m := range order {
			if slices.Contains(ms, m) || m == "HEAD" && slices.Contains(ms, "GET") {
				want = append(want, m)
			}
		}
		other := ""
		for _, m := range order {
			if !slices.Contains(want, m) {
				other = m
				break
			}
		}
		if other == "" {
			continue // the path takes every method we would try
		}
		w := e.do(request{method: other, target: concrete[path]})
		if w.Code != 405 {
			t.Errorf("%s %s: %d, want 405", other, path, w.Code)
			continue
		}
		if got := w.Header().Get("Allow"); got != strings.Join(want, ", ") {
			t.Errorf("%s %s: Allow %q; the document gives %s", other, path, got, strings.Join(want, ", "))
		}
	}
}
