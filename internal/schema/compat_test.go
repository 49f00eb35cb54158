package schema

import (
	"errors"
	"strings"
	"testing"
)

const baseSchema = `{
	"type": "object",
	"required": ["id"],
	"properties": {
		"id": {"type": "string"},
		"price": {"type": "number"},
		"address": {
			"type": "object",
			"required": ["zip"],
			"properties": {"zip": {"type": "string"}, "city": {"type": "string"}}
		},
		"lines": {
			"type": "array",
			"items": {
				"type": "object",
				"required": ["sku"],
				"properties": {"sku": {"type": "string"}, "qty": {"type": "integer"}}
			}
		}
	}
}`

// edit returns baseSchema with one fragment replaced, so each case shows
// exactly what changed.
func edit(t *testing.T, old, repl string) string {
	t.Helper()
	if !strings.Contains(baseSchema, old) {
		t.Fatalf("fragment %q not in baseSchema", old)
	}
	return strings.Replace(baseSchema, old, repl, 1)
}

func frozen(where, kw string) string {
	return where + `: "` + kw + `" changed (only type, properties, required, additionalProperties, items and allOf may evolve)`
}

// TestCompatible runs every pair both ways: a is the old schema for
// aToB and the new one for bToA.
func TestCompatible(t *testing.T) {
	const (
		tree = `{"$defs":{"node":{"type":"object","properties":{"v":{"type":"integer"},"kids":{"type":"array","items":{"$ref":"#/$defs/node"}}}}},"$ref":"#/$defs/node"}`
		addr = `{"type":"object","properties":{"zip":{"type":"string"},"city":{"type":"string"}}}`
	)
	tests := []struct {
		name       string
		a, b       string
		aToB, bToA string // "" compatible; else the exact error message
	}{
		{"identical", baseSchema, baseSchema, "", ""},
		{"JSON-equal, different layout", `{"type":"object","required":["id"]}`, "{ \"required\" : [\"id\"],\n \"type\": \"object\" }", "", ""},
		{"optional property added / removed", baseSchema,
			edit(t, `"price": {"type": "number"},`, `"price": {"type": "number"}, "note": {"type": "string"},`),
			"", `property "note" removed`},
		{"property type changed", baseSchema,
			edit(t, `"price": {"type": "number"}`, `"price": {"type": "string"}`),
			`property "price": type changed from "number" to "string"`, `property "price": type changed from "string" to "number"`},
		{"type widened / narrowed", baseSchema,
			edit(t, `"id": {"type": "string"}`, `"id": {"type": ["string", "null"]}`),
			"", `property "id": type changed from ["string","null"] to "string"`},
		{"integer and number are different names", `{"properties":{"n":{"type":"integer"}}}`, `{"properties":{"n":{"type":"number"}}}`,
			`property "n": type changed from "integer" to "number"`, `property "n": type changed from "number" to "integer"`},
		{"type added / removed", `{"properties":{"n":{}}}`, `{"properties":{"n":{"type":"number"}}}`,
			`property "n": type changed from (unspecified) to "number"`, `property "n": type changed from "number" to (unspecified)`},
		{"root type changed", `{"type":"object"}`, `{"type":"array"}`,
			`root schema: type changed from "object" to "array"`, `root schema: type changed from "array" to "object"`},
		{"true root gains a type", `true`, `{"type":"object"}`,
			`root schema: type changed from (unspecified) to "object"`, `root schema: type changed from "object" to (unspecified)`},
		{"required added / dropped", baseSchema,
			edit(t, `"required": ["id"],`, `"required": ["id", "price"],`),
			`"price" newly required`, `required "price" dropped`},
		{"new required property / property removed", baseSchema,
			edit(t, `"required": ["id"],
	"properties": {`, `"required": ["id", "sku"],
	"properties": {"sku": {"type": "string"},`),
			`"sku" newly required`, `property "sku" removed`},
		{"nested property removed / added", baseSchema,
			edit(t, `"zip": {"type": "string"}, "city": {"type": "string"}`, `"zip": {"type": "string"}`),
			`property "address.city" removed`, ""},
		{"nested required added / dropped", baseSchema,
			edit(t, `"required": ["zip"]`, `"required": ["zip", "city"]`),
			`"address.city" newly required`, `required "address.city" dropped`},
		{"item property type changed", baseSchema,
			edit(t, `"qty": {"type": "integer"}`, `"qty": {"type": "string"}`),
			`property "lines[].qty": type changed from "integer" to "string"`, `property "lines[].qty": type changed from "string" to "integer"`},
		{"item property removed / added", baseSchema,
			edit(t, `"sku": {"type": "string"}, "qty": {"type": "integer"}`, `"sku": {"type": "string"}`),
			`property "lines[].qty" removed`, ""},
		{"items added / removed", `{"type":"array"}`, `{"type":"array","items":{"type":"string"}}`,
			`property "[]": type changed from (unspecified) to "string"`, `property "[]": type changed from "string" to (unspecified)`},
		{"additionalProperties closed / opened", `{"type":"object"}`, `{"type":"object","additionalProperties":false}`,
			`property "*": now rejects every value (false schema)`, ""},
		{"forbidden property allowed / forbidden", `{"properties":{"legacy":false}}`, `{"properties":{"legacy":{"type":"string"}}}`,
			"", `property "legacy": now rejects every value (false schema)`},
		{"prefixItems grown / shrunk", `{"prefixItems":[{"type":"string"}]}`, `{"prefixItems":[{"type":"string"},{"type":"integer"}]}`,
			`root schema: prefixItems changed from 1 to 2 entries`, `root schema: prefixItems changed from 2 to 1 entries`},
		{"prefixItems entry type changed", `{"prefixItems":[{"type":"string"}]}`, `{"prefixItems":[{"type":"integer"}]}`,
			`property "[0]": type changed from "string" to "integer"`, `property "[0]": type changed from "integer" to "string"`},
		{"draft-07 tuple items vs single schema", `{"$schema":"http://json-schema.org/draft-07/schema#","items":[{"type":"string"}]}`, `{"$schema":"http://json-schema.org/draft-07/schema#","items":{"type":"string"}}`,
			`root schema: items changed between tuple and single-schema form`, `root schema: items changed between tuple and single-schema form`},
		{"allOf branch property removed / added", `{"allOf":[{"properties":{"a":{},"b":{}}}]}`, `{"allOf":[{"properties":{"a":{}}}]}`,
			`property "b" removed`, ""},
		{"$defs target changed behind an unchanged $ref",
			`{"$defs":{"addr":` + addr + `},"properties":{"ship":{"$ref":"#/$defs/addr"}}}`,
			`{"$defs":{"addr":{"type":"object","properties":{"zip":{"type":"string"}}}},"properties":{"ship":{"$ref":"#/$defs/addr"}}}`,
			`property "ship.city" removed`, ""},
		{"inline schema moved into $defs, and back",
			`{"properties":{"ship":` + addr + `}}`,
			`{"$defs":{"addr":` + addr + `},"properties":{"ship":{"$ref":"#/$defs/addr","description":"shipping"}}}`,
			"", ""},
		{"$ref added next to constraints / removed",
			`{"$defs":{"s":{"type":"string"}},"properties":{"x":{"type":"string","minLength":1}}}`,
			`{"$defs":{"s":{"type":"string"}},"properties":{"x":{"$ref":"#/$defs/s","minLength":1}}}`,
			`property "x": $ref added`, `property "x": $ref removed`},
		{"recursive schema evolves",
			tree,
			strings.Replace(tree, `"v":{"type":"integer"}`, `"v":{"type":"integer"},"label":{"type":"string"}`, 1),
			"", `property "label" removed`},
		{"recursive schema changes deep down",
			tree,
			strings.Replace(tree, `"v":{"type":"integer"}`, `"v":{"type":"string"}`, 1),
			`property "v": type changed from "integer" to "string"`, `property "v": type changed from "string" to "integer"`},
		{"oneOf changed", `{"oneOf":[{"type":"string"},{"type":"integer"}]}`, `{"oneOf":[{"type":"string"},{"type":"number"}]}`,
			frozen("root schema", "oneOf"), frozen("root schema", "oneOf")},
		{"anyOf added / removed", `{"properties":{"x":{}}}`, `{"properties":{"x":{"anyOf":[{"type":"string"},{"type":"null"}]}}}`,
			frozen(`property "x"`, "anyOf"), frozen(`property "x"`, "anyOf")},
		{"anyOf text unchanged, its $ref target changed",
			`{"$defs":{"s":{"type":"string"}},"properties":{"x":{"anyOf":[{"$ref":"#/$defs/s"},{"type":"null"}]}}}`,
			`{"$defs":{"s":{"type":"integer"}},"properties":{"x":{"anyOf":[{"$ref":"#/$defs/s"},{"type":"null"}]}}}`,
			frozen(`property "x"`, "anyOf"), frozen(`property "x"`, "anyOf")},
		{"unused $defs entry changed", `{"$defs":{"s":{"type":"string"}},"type":"object"}`, `{"$defs":{"s":{"type":"integer"}},"type":"object"}`, "", ""},
		{"anchor $ref cannot be followed once documents differ",
			`{"$defs":{"s":{"$anchor":"S","type":"string"}},"properties":{"x":{"$ref":"#S"}},"title":"v1"}`,
			`{"$defs":{"s":{"$anchor":"S","type":"string"}},"properties":{"x":{"$ref":"#S"}},"title":"v2"}`,
			`property "x": cannot compare $ref "#S": only local JSON-pointer references ("#/...") are followed`,
			`property "x": cannot compare $ref "#S": only local JSON-pointer references ("#/...") are followed`},
		{"anchor $ref in identical documents", `{"$defs":{"s":{"$anchor":"S"}},"$ref":"#S"}`, `{"$defs":{"s":{"$anchor":"S"}},"$ref":"#S"}`, "", ""},
		{"$ref relative to an embedded $id",
			`{"properties":{"a":{"$id":"https://example.com/a","$defs":{"t":{"type":"string"}},"properties":{"b":{"$ref":"#/$defs/t"}}}},"$defs":{"t":{"type":"string"}}}`,
			`{"properties":{"a":{"$id":"https://example.com/a","$defs":{"t":{"type":"integer"}},"properties":{"b":{"$ref":"#/$defs/t"}}}},"$defs":{"t":{"type":"string"}}}`,
			`property "a.b": type changed from "string" to "integer"`, `property "a.b": type changed from "integer" to "string"`},
		{"annotations changed", `{"title":"a","description":"x","properties":{"p":{"type":"string","examples":["q"]}}}`, `{"title":"b","properties":{"p":{"type":"string","deprecated":true}}}`, "", ""},
		{"value constraints are not compared", `{"properties":{"p":{"type":"string"}}}`, `{"properties":{"p":{"type":"string","minLength":3,"enum":["abc"]}}}`, "", ""},
		{"$schema changed", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object"}`, `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object"}`,
			`$schema changed from "http://json-schema.org/draft-07/schema" to "https://json-schema.org/draft/2020-12/schema"`,
			`$schema changed from "https://json-schema.org/draft/2020-12/schema" to "http://json-schema.org/draft-07/schema"`},
		{"absent $schema is 2020-12", `{"type":"object"}`, `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object"}`, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkCompatible(t, "a→b", tt.a, tt.b, tt.aToB)
			checkCompatible(t, "b→a", tt.b, tt.a, tt.bToA)
		})
	}
}

func checkCompatible(t *testing.T, dir, old, new, want string) {
	t.Helper()
	err := Compatible([]byte(old), []byte(new))
	switch {
	case want == "" && err != nil:
		t.Errorf("%s: Compatible: %v", dir, err)
	case want == "":
	case err == nil:
		t.Errorf("%s: compatible, want %q", dir, want)
	case !errors.Is(err, ErrIncompatible):
		t.Errorf("%s: error %v does not wrap ErrIncompatible", dir, err)
	case err.Error() != want:
		t.Errorf("%s: error\n got %q\nwant %q", dir, err.Error(), want)
	}
}

// TestCompatibleFirstIsStable: several removals must always report the
// same one, whatever order the maps are walked in.
func TestCompatibleFirstIsStable(t *testing.T) {
	old := `{"properties":{"a":{},"b":{},"c":{},"d":{},"e":{},"f":{"type":"string"}}}`
	new := `{"properties":{"a":{},"f":{"type":"integer"}}}`
	for i := 0; i < 50; i++ {
		err := Compatible([]byte(old), []byte(new))
		if err == nil || err.Error() != `property "b" removed` {
			t.Fatalf("run %d: got %v", i, err)
		}
	}
}

func TestCompatibleInvalidInput(t *testing.T) {
	tests := []struct {
		name, old, new, want string
	}{
		{"old not JSON", `{`, `{}`, "old schema: not JSON: unexpected EOF"},
		{"new not a schema", `{}`, `{"type":5}`, "new schema: not a valid schema: at '/type': value must be one of 'array', 'boolean', 'integer', 'null', 'number', 'object', 'string' (and 1 more error)"},
		{"identical but remote", `{"$ref":"https://example.com/x"}`, `{"$ref":"https://example.com/x"}`, `old schema: unresolvable reference "https://example.com/x": ` + errNotFetched.Error()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Compatible([]byte(tt.old), []byte(tt.new))
			if err == nil || !errors.Is(err, ErrInvalidSchema) || errors.Is(err, ErrIncompatible) {
				t.Fatalf("got %v, want an ErrInvalidSchema", err)
			}
			if err.Error() != tt.want {
				t.Errorf("error\n got %q\nwant %q", err.Error(), tt.want)
			}
		})
	}
}

func TestChildCompatible(t *testing.T) {
	const child = `{"type":"object","required":["id"],"properties":{"id":{"type":"string"}}}`
	tests := []struct {
		name, parent, want string
		child              string // "" means child
	}{
		{name: "same schema", parent: child},
		{name: "parent adds an optional property", parent: `{"type":"object","required":["id"],"properties":{"id":{"type":"string"},"note":{"type":"string"}}}`},
		{name: "parent lacks the child's property", parent: `{"type":"object","required":["id"],"properties":{}}`,
			want: `parent schema is not an additive evolution of the child's: property "id" removed`},
		{name: "parent requires more", parent: `{"type":"object","required":["id","note"],"properties":{"id":{"type":"string"},"note":{"type":"string"}}}`,
			want: `parent schema is not an additive evolution of the child's: "note" newly required`},
		{name: "invalid child is named", parent: child, child: `{"type":`, want: "child schema: not JSON: unexpected EOF"},
		{name: "invalid parent is named", parent: `[]`, want: "parent schema: not a schema: the document must be a JSON object or boolean, got an array"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.child
			if c == "" {
				c = child
			}
			err := ChildCompatible([]byte(tt.parent), []byte(c))
			if tt.want == "" {
				if err != nil {
					t.Fatalf("ChildCompatible: %v", err)
				}
				return
			}
			if err == nil || err.Error() != tt.want {
				t.Fatalf("got %v, want %q", err, tt.want)
			}
			wantKind := ErrIncompatible
			if strings.Contains(tt.name, "invalid") {
				wantKind = ErrInvalidSchema
			}
			if !errors.Is(err, wantKind) {
				t.Errorf("error %v does not wrap %v", err, wantKind)
			}
		})
	}
}
