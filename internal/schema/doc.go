// Package schema owns the JSON Schema side of topics: compiling a topic's
// schema document, validating produced bodies against it, and deciding
// whether a replacement schema is an additive evolution of the current one.
// It is pure logic on byte slices: it keeps no state between calls and does
// no I/O of any kind.
//
// Invariant: a *Schema exists only for a document that compiled without
// loading anything from outside itself (no network, no files; only the
// standard meta-schemas embedded in the library), and it is never mutated
// after Compile returns, so one *Schema may be shared by any number of
// goroutines calling Validate.
//
// # Compile and Validate
//
// Drafts 4, 6, 7, 2019-09 and 2020-12 are accepted; a document without
// "$schema" is read as 2020-12. Every "$ref" must resolve inside the
// document: a reference to any other URL, file or unknown meta-schema is a
// compile error, never a fetch. "format" and "content*" keywords follow the
// library defaults (format asserted for draft-07 and earlier, annotation
// only for 2019-09 and later). Bodies are decoded once, numbers kept exact
// as json.Number; patterns use Go's RE2, which never backtracks, and the
// library hashes for uniqueItems, so for a given schema the cost grows
// linearly with the body (BenchmarkValidateLarge compares 256 KiB with
// 1 MiB).
//
// Validate reports one leaf error, "at '<JSON pointer>': <reason>", chosen
// deterministically (the earliest instance location, array indices in
// numeric order, then the keyword location) because the library collects
// sibling errors in map order. When there are more, " (and N more errors)"
// is appended so a client knows fixing one may not be enough.
//
// Errors wrap ErrInvalidSchema, ErrInvalidPayload or ErrIncompatible so a
// caller can choose its status without reading messages (the API answers
// an incompatible PATCH 400, an invalid evolution, and an incompatible
// child at attach 409, a conflict with the parent's state).
//
// # Compatibility
//
// Compatible(old, new) is a conservative structural check, not a proof that
// every body valid under old is valid under new. Both documents must
// compile; JSON-equal documents are then always compatible. Else "$schema"
// must name the same draft (absent means 2020-12), and from the root the
// two schemas are walked in step, applying at every node:
//
//   - false accepts nothing, so a node that was false may become anything;
//     a node that becomes false is rejected.
//   - type: absent on both, or the old set of type names is a subset of the
//     new one. Widening ("integer" to ["integer","null"]) is accepted
//     because every old body still passes; narrowing, renaming ("integer"
//     to "number" included: names are compared, not meanings), adding type
//     where there was none, and removing it altogether are rejected.
//   - $ref: only local JSON-pointer refs ("#" or "#/...") are followed,
//     relative to the nearest enclosing "$id"; both targets are compared
//     recursively (each pair of nodes once, which ends recursive schemas).
//     A node that is nothing but a $ref (plus annotations and $defs) may
//     be inlined or moved into $defs; a $ref added or removed next to other
//     keywords is rejected. Anchors, $id-relative and absolute refs cannot
//     be followed, so they are rejected unless the documents are equal.
//   - properties: every old property must still be declared. New ones may
//     be added whatever additionalProperties said, as the spec allows.
//   - required: no name may be dropped and none added, so a new property
//     can only be optional.
//   - each old property, then additionalProperties (absent means true;
//     addressed as "*"), items in single-schema form ("[]"), items in tuple
//     form and prefixItems (same length, position by position) and allOf
//     (same length, branch by branch) are compared recursively by the same
//     rules. An absent items is true, so adding items narrows and is
//     rejected, and so is closing additionalProperties.
//   - anyOf, oneOf, not, if, then, else, contains, patternProperties,
//     propertyNames, additionalItems, unevaluatedProperties,
//     unevaluatedItems, dependencies, dependentRequired, dependentSchemas,
//     $dynamicRef and $recursiveRef must not change at all: their additive
//     evolutions are not understood. Local $refs inside them must point at
//     equal targets.
//
// Not compared, so free to change in either direction: annotations (title,
// description, default, examples, ...), and value constraints such as
// enum, const, minLength, maxLength, pattern, format, minimum, maximum,
// multipleOf, minItems, maxItems, uniqueItems, minProperties and
// maxProperties. $defs are only compared where a $ref reaches them.
//
// The first incompatibility found is reported; properties are visited in
// name order so it is always the same one. The path uses dots for
// properties, "[]" for items and "[i]" for tuple entries, e.g.
// `property "price": type changed from "number" to "string"`,
// `property "sku" removed`, `"sku" newly required`, `required "id" dropped`.
//
// A fan-out child inherits its parent's schema while attached, so its
// consumers will see bodies shaped by the parent's schema. ChildCompatible
// therefore requires the parent's schema to be an additive evolution of the
// child's own: it is Compatible(child, parent). Equal schemas pass. After
// a detach the child keeps the schema it inherited (the metastore copies
// it into the child's record), so its consumers' bodies stay checked.
package schema
