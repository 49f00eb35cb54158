package broker

import (
	"encoding/json"
	"sync"

	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/refusal"
	"github.com/narad-io/narad/internal/schema"
)

// schemaCache keeps compiled schemas keyed by the raw document, so produce
// pays the compile once per schema, not per request.
type schemaCache struct {
	mu sync.Mutex
	m  map[string]*schema.Schema
}

func (c *schemaCache) compile(raw json.RawMessage) (*schema.Schema, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.m[string(raw)]; ok {
		return s, nil
	}
	s, err := schema.Compile(raw)
	if err != nil {
		return nil, refusal.New(refusal.ErrInvalid, 0, "schema: %v", err)
	}
	if c.m == nil || len(c.m) > 1024 {
		c.m = make(map[string]*schema.Schema)
	}
	c.m[string(raw)] = s
	return s, nil
}

// validate checks a payload against the topic's schema, if it has one.
// An attached child's schema is its parent's (the parent manages it).
func (c *schemaCache) validate(t meta.Topic, payload []byte) error {
	if !hasSchema(t.Schema) {
		return nil
	}
	s, err := c.compile(t.Schema)
	if err != nil {
		return err
	}
	if err := s.Validate(payload); err != nil {
		return refusal.New(refusal.ErrInvalid, 0, "payload does not match the schema of %q: %v", t.Name, err)
	}
	return nil
}

// schemaSource is the topic whose schema applies to t: an attached child's
// is its parent's while the parent has one (the parent manages it), else
// t's own.
func (a *admin) schemaSource(t meta.Topic) meta.Topic {
	if t.Parent != "" {
		if p, ok := a.meta.Topic(t.Parent); ok && hasSchema(p.Schema) {
			return p
		}
	}
	return t
}

// alterSchema validates a PATCHed schema: it must compile and, when the
// topic has one already, be an additive evolution of it. An incompatible
// evolution is an invalid request (400, as the reference answers), not a
// conflict with another resource. JSON null removes the schema.
func (a *admin) alterSchema(t meta.Topic, raw json.RawMessage, u *meta.TopicUpdate) error {
	if t.Parent != "" { // setting or clearing alike: the parent manages it while attached
		return refusal.New(refusal.ErrConflict, 0, "%q is a fan-out child: its schema is managed by its parent %q", t.Name, t.Parent)
	}
	if !hasSchema(raw) {
		u.ClearSchema = true
		return nil
	}
	if _, err := a.schemas.compile(raw); err != nil {
		return err
	}
	if hasSchema(t.Schema) {
		if err := schema.Compatible(t.Schema, raw); err != nil {
			return refusal.New(refusal.ErrInvalid, 0, "incompatible schema change (only additive evolutions are allowed): %v", err)
		}
	}
	u.Schema = raw
	return nil
}
