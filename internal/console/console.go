package console

import (
	"embed"
	"encoding/json"
	"io/fs"
	"net/http"
	"strings"
)

//go:embed assets
var assets embed.FS

// Prefix is where the console is served.
const Prefix = "/console/"

// policy is the console's Content-Security-Policy: its own scripts and
// styles only (no inline code, no eval), fetches to this origin only, and
// no framing by anyone.
const policy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// Handler serves the console at /console/ and redirects GET / there;
// every other request goes to api as it came.
func Handler(api http.Handler) http.Handler {
	files, err := fs.Sub(assets, "assets")
	if err != nil {
		panic(err) // the embedded tree is part of the binary
	}
	server := http.FileServerFS(files)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		get := r.Method == http.MethodGet || r.Method == http.MethodHead
		switch {
		case p == "/" && get:
			http.Redirect(w, r, Prefix, http.StatusFound)
		case p == "/console" && get:
			http.Redirect(w, r, Prefix, http.StatusMovedPermanently)
		case strings.HasPrefix(p, Prefix):
			serveAsset(w, r, files, server, strings.TrimPrefix(p, Prefix))
		default:
			api.ServeHTTP(w, r)
		}
	})
}

func serveAsset(w http.ResponseWriter, r *http.Request, files fs.FS, server http.Handler, name string) {
	h := w.Header()
	h.Set("Content-Security-Policy", policy)
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	// A new binary may bring new assets: revalidate every time (they are
	// small, and embedded files carry no modification time).
	h.Set("Cache-Control", "no-cache")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		h.Set("Allow", "GET, HEAD")
		jsonError(w, http.StatusMethodNotAllowed, "method "+r.Method+" is not allowed on "+r.URL.Path+" (it takes GET, HEAD)")
		return
	}
	if name == "" {
		name = "index.html"
	}
	// The same edge as the API's: no path syntax that would be cleaned
	// into another path (and no file server redirect for it).
	if !fs.ValidPath(name) || strings.HasSuffix(name, "/") || name == "index.html" && r.URL.Path != Prefix {
		if name == "index.html" {
			http.Redirect(w, r, Prefix, http.StatusFound)
			return
		}
		jsonError(w, http.StatusNotFound, "no console file "+r.URL.Path)
		return
	}
	if st, err := fs.Stat(files, name); err != nil || st.IsDir() {
		jsonError(w, http.StatusNotFound, "no console file "+r.URL.Path)
		return
	}
	r2 := r.Clone(r.Context())
	r2.URL.Path = "/" + name
	if name == "index.html" {
		r2.URL.Path = "/"
	}
	server.ServeHTTP(w, r2)
}

func jsonError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"error": msg})
}
