package console

import (
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

// api stands for the /v1 handler: it answers every request it gets with
// 418, so a test sees which requests reached it.
var api = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTeapot) })

func do(method, target string) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	Handler(api).ServeHTTP(w, httptest.NewRequest(method, target, nil))
	return w
}

func TestRootRedirectsToTheConsole(t *testing.T) {
	for _, c := range []struct {
		target string
		code   int
	}{{"/", http.StatusFound}, {"/console", http.StatusMovedPermanently}} {
		w := do("GET", c.target)
		if w.Code != c.code || w.Header().Get("Location") != "/console/" {
			t.Errorf("GET %s: %d Location %q, want %d to /console/", c.target, w.Code, w.Header().Get("Location"), c.code)
		}
	}
	// Only GET: anything else at / is the API's (a JSON 404 or 405).
	if w := do("POST", "/"); w.Code != http.StatusTeapot {
		t.Errorf("POST / did not reach the API: %d", w.Code)
	}
}

// Everything outside /console/ goes to the API untouched: the console
// adds no route of its own there.
func TestEverythingElseIsTheAPIs(t *testing.T) {
	for _, target := range []string{"/v1/topics", "/v1/topics/orders/stats/history", "/healthz", "/metrics", "/consolex", "/v1/console/"} {
		if w := do("GET", target); w.Code != http.StatusTeapot {
			t.Errorf("GET %s: %d, not the API's", target, w.Code)
		}
	}
}

func TestAssetsCarryTheSecurityHeaders(t *testing.T) {
	err := fs.WalkDir(assets, "assets", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		target := "/console/" + strings.TrimPrefix(path, "assets/")
		if target == "/console/index.html" {
			target = "/console/"
		}
		w := do("GET", target)
		if w.Code != http.StatusOK {
			t.Errorf("GET %s: %d", target, w.Code)
			return nil
		}
		h := w.Header()
		csp := h.Get("Content-Security-Policy")
		if !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") ||
			!strings.Contains(csp, "frame-ancestors 'none'") || !strings.Contains(csp, "connect-src 'self'") {
			t.Errorf("GET %s: CSP %q", target, csp)
		}
		if h.Get("X-Frame-Options") != "DENY" || h.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s: X-Frame-Options %q, X-Content-Type-Options %q", target, h.Get("X-Frame-Options"), h.Get("X-Content-Type-Options"))
		}
		if strings.HasSuffix(path, ".js") && !strings.HasPrefix(h.Get("Content-Type"), "text/javascript") {
			t.Errorf("GET %s: Content-Type %q (a module must be JavaScript)", target, h.Get("Content-Type"))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The CSP forbids inline code; the assets hold none, so the policy
// never has to be loosened for them.
func TestNoInlineCode(t *testing.T) {
	inline := []*regexp.Regexp{
		regexp.MustCompile(`<script(?:\s[^>]*)?>\s*[^<\s]`), // a script element with a body
		regexp.MustCompile(`(?i)\son[a-z]+\s*=\s*["']`),     // onclick="…" in markup
		regexp.MustCompile(`<style`),
		regexp.MustCompile(`\beval\(|new Function\(`),
		regexp.MustCompile(`\.innerHTML\s*=`),
	}
	fs.WalkDir(assets, "assets", func(path string, d fs.DirEntry, err error) error {
		if d.IsDir() {
			return nil
		}
		b, _ := fs.ReadFile(assets, path)
		for _, re := range inline {
			if loc := re.FindIndex(b); loc != nil && (strings.HasSuffix(path, ".html") || re.String() != `(?i)\son[a-z]+\s*=\s*["']`) {
				t.Errorf("%s: inline code %q", path, b[loc[0]:min(loc[1]+20, len(b))])
			}
		}
		return nil
	})
}

func TestNoFileIsANotFound(t *testing.T) {
	for _, target := range []string{"/console/nothing.js", "/console/pages/", "/console/pages"} {
		w := do("GET", target)
		body, _ := io.ReadAll(w.Body)
		if w.Code != http.StatusNotFound || !strings.Contains(string(body), `"error"`) {
			t.Errorf("GET %s: %d %s", target, w.Code, body)
		}
	}
	if w := do("POST", "/console/app.js"); w.Code != http.StatusMethodNotAllowed || w.Header().Get("Allow") != "GET, HEAD" {
		t.Errorf("POST /console/app.js: %d Allow %q", w.Code, w.Header().Get("Allow"))
	}
	if w := do("GET", "/console/index.html"); w.Code != http.StatusFound {
		t.Errorf("GET /console/index.html: %d, want a redirect to /console/", w.Code)
	}
}
