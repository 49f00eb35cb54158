package meta

import (
	"encoding/json"
	"slices"
)

// applySetAssignments replaces the placements of the named partitions. The
// controller proposes it; every partition must exist at apply time (a topic
// deleted or not yet grown meanwhile refuses the whole command).
func applySetAssignments(a *applyTx, payload json.RawMessage) error {
	var c SetAssignmentsCmd
	if err := decodePayload(OpSetAssignments, payload, &c); err != nil {
		return err
	}
	// Group by topic in first-seen order (not map order: Apply must be
	// deterministic, and so must the order of writes within it).
	var order []string
	byTopic := make(map[string][]Assignment)
	for _, as := range c.Assignments {
		if _, ok := byTopic[as.Topic]; !ok {
			order = append(order, as.Topic)
		}
		byTopic[as.Topic] = append(byTopic[as.Topic], as)
	}
	changed := false
	for _, name := range order {
		t, err := a.existingTopic(name, "")
		if err != nil {
			return err
		}
		old, err := a.assignments(name)
		if err != nil {
			return err
		}
		as, err := mergeAssignments(name, old, t.Partitions, 0, byTopic[name])
		if err != nil {
			return err
		}
		if slices.EqualFunc(as, old, Assignment.Equal) {
			continue
		}
		if err := a.putAssignments(name, as); err != nil {
			return err
		}
		changed = true
	}
	if changed {
		a.bump(domAssignments)
	}
	return nil
}
