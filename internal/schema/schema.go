package schema

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Sentinels let the API layer choose a status (400 or 409) without parsing
// messages; every error this package returns wraps exactly one of them.
var (
	ErrInvalidSchema  = errors.New("invalid schema")
	ErrInvalidPayload = errors.New("invalid payload")
	ErrIncompatible   = errors.New("incompatible schema change")
)

// kindError carries a readable message while still matching its sentinel
// with errors.Is; the sentinel text is left out because callers already
// prefix their own context.
type kindError struct {
	kind error
	msg  string
}

func (e *kindError) Error() string { return e.msg }
func (e *kindError) Unwrap() error { return e.kind }

func errorf(kind error, format string, args ...any) error {
	return &kindError{kind: kind, msg: fmt.Sprintf(format, args...)}
}

// docURL names the document inside the compiler. The scheme is Narad's own,
// so it never resembles a path on the machine that compiled it. It must be
// hierarchical: against an opaque base such as "narad:schema.json" the
// library resolves a relative ref like "other.json" to the document itself,
// silently turning it into a self-reference instead of refusing it.
const docURL = "narad://topic/schema.json"

// errNotFetched is what every reference outside the document gets: the
// broker must not reach the network or the filesystem on behalf of a
// client-supplied schema.
var errNotFetched = errors.New("only references within the schema document are allowed; nothing is fetched")

// refuseLoader replaces the library's default FileLoader. Standard
// meta-schemas are served from the library's embedded copies before any
// loader is asked, so refusing everything costs no legitimate schema.
type refuseLoader struct{}

func (refuseLoader) Load(string) (any, error) { return nil, errNotFetched }

// Schema is a compiled topic schema. It is immutable, so Validate may be
// called from many goroutines at once.
type Schema struct {
	compiled *jsonschema.Schema
}

// Compile parses and compiles a JSON Schema document. The error says why it
// was refused: not JSON, not a schema, invalid against its meta-schema, or a
// $ref that does not resolve inside the document.
func Compile(raw []byte) (*Schema, error) {
	s, _, err := compile(raw)
	return s, err
}

// compile also returns the decoded document, which Compatible walks.
func compile(raw []byte) (*Schema, any, error) {
	doc, err := decodeJSON(raw)
	if err != nil {
		return nil, nil, errorf(ErrInvalidSchema, "not JSON: %v", err)
	}
	switch doc.(type) {
	case map[string]any, bool:
	default:
		return nil, nil, errorf(ErrInvalidSchema, "not a schema: the document must be a JSON object or boolean, got %s", jsonKind(doc))
	}
	// A Compiler caches what it compiled and is not safe for concurrent
	// use, so each document gets its own.
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(refuseLoader{})
	if err := c.AddResource(docURL, doc); err != nil {
		return nil, nil, errorf(ErrInvalidSchema, "%v", err)
	}
	sch, err := c.Compile(docURL)
	if err != nil {
		return nil, nil, compileError(err)
	}
	return &Schema{compiled: sch}, doc, nil
}

// compileError turns the library's error types into one short sentence;
// their own messages carry the internal document URL and, for meta-schema
// failures, a whole tree of causes.
func compileError(err error) error {
	var (
		sve *jsonschema.SchemaValidationError
		lue *jsonschema.LoadURLError
		jpe *jsonschema.JSONPointerNotFoundError
		ane *jsonschema.AnchorNotFoundError
		ije *jsonschema.InvalidJsonPointerError
	)
	switch {
	case errors.As(err, &sve):
		var ve *jsonschema.ValidationError
		if errors.As(sve.Err, &ve) {
			return errorf(ErrInvalidSchema, "not a valid schema: %s", describe(ve))
		}
		return errorf(ErrInvalidSchema, "not a valid schema: %v", sve.Err)
	case errors.As(err, &lue):
		return errorf(ErrInvalidSchema, "unresolvable reference %q: %v", lue.URL, lue.Err)
	case errors.As(err, &jpe):
		return errorf(ErrInvalidSchema, "unresolvable $ref: %s not found in the document", fragment(jpe.URL))
	case errors.As(err, &ane):
		return errorf(ErrInvalidSchema, "unresolvable $ref: anchor %s not found in the document", fragment(ane.Reference))
	case errors.As(err, &ije):
		return errorf(ErrInvalidSchema, "unresolvable $ref: invalid JSON pointer %s", fragment(ije.URL))
	}
	return errorf(ErrInvalidSchema, "%v", err)
}

// fragment keeps the part of a library URL a client wrote ("#/$defs/x"),
// dropping the internal document name.
func fragment(u string) string {
	if i := strings.IndexByte(u, '#'); i >= 0 {
		return fmt.Sprintf("%q", u[i:])
	}
	return fmt.Sprintf("%q", u)
}

// Validate checks that payload is one JSON value and valid against s.
func (s *Schema) Validate(payload []byte) error {
	v, err := decodeJSON(payload)
	if err != nil {
		return errorf(ErrInvalidPayload, "body is not JSON: %v", err)
	}
	err = s.compiled.Validate(v)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if errors.As(err, &ve) {
		return errorf(ErrInvalidPayload, "%s", describe(ve))
	}
	return errorf(ErrInvalidPayload, "%v", err)
}

// decodeJSON reads exactly one JSON value. Numbers stay json.Number so large
// integers keep their precision against minimum/maximum/multipleOf, and
// trailing data is an error so "{} {}" is not accepted as an object.
func decodeJSON(raw []byte) (any, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, errors.New("empty")
	}
	return jsonschema.UnmarshalJSON(bytes.NewReader(raw))
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case []any:
		return "an array"
	case string:
		return "a string"
	default:
		return "a number"
	}
}
