package deploy

import (
	"strings"
	"testing"

	"github.com/narad-io/narad/internal/config"
)

// narad returns the StatefulSet's narad container.
func narad(t *testing.T, objs []object) any {
	t.Helper()
	c := at(only(t, objs, "StatefulSet"), "spec", "template", "spec", "containers", "name=narad")
	if c == nil {
		t.Fatal("the StatefulSet has no container named narad")
	}
	return c
}

// TestChartSetsOnlyRealSettings: every NARAD_* variable the chart gives a
// node is one the node reads. A misspelt name is silently ignored by the
// node (an HTTPS certificate that is never served), so the chart's names
// are checked against the settings table, whatever values enable them.
func TestChartSetsOnlyRealSettings(t *testing.T) {
	known := map[string]bool{}
	for _, s := range config.Settings() {
		known[s.Env] = true
	}
	for _, args := range [][]string{
		nil,
		{"--set", "replicas=1"},
		{"--set", "tls.clusterSecret=c", "--set", "tls.apiSecret=a"},
	} {
		for name := range envOf(narad(t, render(t, args...))) {
			if strings.HasPrefix(name, "NARAD_") && !known[name] {
				t.Errorf("with %v the chart sets %s, which is no setting of the node (config.Settings)", args, name)
			}
		}
	}
}
