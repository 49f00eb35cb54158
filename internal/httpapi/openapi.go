package httpapi

import (
	_ "embed"
	"net/http"
)

// openAPIDocument is the OpenAPI 3.1 description of every route this
// package serves. openapi_test.go holds it to the route table: the same
// routes, the query parameters each route accepts, and the statuses of
// docs/http-api.md.
//
//go:embed openapi.json
var openAPIDocument []byte

// openAPI serves the document. It needs no credentials, like /healthz: it
// is the API's shape, identical on every node, and holds no data, no
// configuration and no version of the node — and tools (code generators,
// API explorers) fetch it before they have credentials.
func (s *Server) openAPI(w http.ResponseWriter, r *http.Request) {
	if err := onlyParams(r.URL.Query()); err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(openAPIDocument)
}
