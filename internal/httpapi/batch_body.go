package httpapi

import (
	"mime"
	"net/http"

	"github.com/narad-io/narad/internal/apierr"
	"github.com/narad-io/narad/internal/broker"
)

// A batch produce body comes in one of three formats, named by its
// Content-Type: a JSON envelope (batch_json.go), NDJSON (batch_ndjson.go)
// or the binary format (batch_binary.go). Any other Content-Type is 415,
// decided before the body is read: a body labelled as something else is
// not guessed at.
//
// No Content-Type, and curl's default for -d
// (application/x-www-form-urlencoded), are read as JSON: docs/http-api.md
// says bodies are JSON unless stated, and the README's curl session sends
// JSON with -d.

const (
	ctNDJSON = "application/x-ndjson"
	ctBinary = "application/x-narad-batch"
)

type batchDecodeFunc func(body []byte) ([]broker.ProduceRecord, error)

// batchFormat picks the decoder for r's Content-Type, or refuses it.
func batchFormat(r *http.Request) (batchDecodeFunc, error) {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return decodeJSONBatch, nil
	}
	mt, _, err := mime.ParseMediaType(ct)
	switch {
	case err != nil:
	case mt == "application/json", mt == "application/x-www-form-urlencoded":
		return decodeJSONBatch, nil
	case mt == ctNDJSON:
		return decodeNDJSONBatch, nil
	case mt == ctBinary:
		return decodeBinaryBatch, nil
	}
	return nil, apierr.New(http.StatusUnsupportedMediaType,
		"Content-Type %q is not a batch body: send application/json, %s or %s", ct, ctNDJSON, ctBinary)
}
