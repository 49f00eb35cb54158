package datadir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// What a start does with topic data that no metastore stands behind
// (the setting recovery.orphan_data).
const (
	OrphanRefuse  = "refuse"  // the default: do not start
	OrphanAdopt   = "adopt"   // re-register the topics found on disk
	OrphanDiscard = "discard" // let the startup reconcile delete them
)

// Policies lists the valid values of recovery.orphan_data.
var Policies = []string{OrphanRefuse, OrphanAdopt, OrphanDiscard}

// Setting names recovery.orphan_data in both its spellings, for errors.
const Setting = "recovery.orphan_data (NARAD_RECOVERY_ORPHAN_DATA)"

// CheckOrphans decides what this start may do with the topic data under
// dir, given whether the metastore has state. It returns adopt when the
// caller must re-register the topics found on disk before any reconcile,
// and an error when the start must not go on.
func CheckOrphans(dir string, metaHasState bool, policy string) (adopt bool, err error) {
	if metaHasState {
		return false, nil
	}
	topics, err := TopicDirs(dir)
	if err != nil {
		return false, err
	}
	if len(topics) == 0 {
		return false, nil
	}
	switch policy {
	case OrphanAdopt:
		return true, nil
	case OrphanDiscard:
		return false, nil
	}
	shown := topics
	if len(shown) > 5 {
		shown = append(shown[:5:5], fmt.Sprintf("… %d more", len(topics)-5))
	}
	return false, fmt.Errorf("the data directory holds data of %d topic(s) (%s) but no metastore state (metastore/ is missing or empty): "+
		"its metadata was lost, and starting would create an empty cluster that deletes this data. Restore metastore/ from a backup, "+
		"or set %s to %q to re-register these topics from disk, or to %q to delete their data",
		len(topics), strings.Join(shown, ", "), Setting, OrphanAdopt, OrphanDiscard)
}

// TopicDirs lists the topic directories under dir's topics/.
func TopicDirs(dir string) ([]string, error) {
	ents, err := os.ReadDir(filepath.Join(dir, "topics"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing topic data: %w", err)
	}
	var names []string
	for _, e := range ents {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names, nil
}
