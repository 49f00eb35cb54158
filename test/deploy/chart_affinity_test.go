package deploy

import (
	"encoding/json"
	"testing"
)

// TestChartSpreadsNodesByDefault: by default the pods prefer distinct
// Kubernetes hosts (a host lost takes one Raft voter, not a majority), a
// preference so a small cluster still schedules; "hard" requires it,
// `affinity` replaces the preset and "" drops it.
func TestChartSpreadsNodesByDefault(t *testing.T) {
	affinity := func(args ...string) any {
		return at(only(t, render(t, args...), "StatefulSet"), "spec", "template", "spec", "affinity")
	}
	pref, _ := at(affinity(), "podAntiAffinity", "preferredDuringSchedulingIgnoredDuringExecution").([]any)
	if len(pref) != 1 {
		t.Fatalf("default: want one preferred pod anti-affinity term, got %v", affinity())
	}
	term := at(pref[0], "podAffinityTerm")
	if at(term, "topologyKey") != "kubernetes.io/hostname" {
		t.Errorf("default: anti-affinity topologyKey = %v, want kubernetes.io/hostname", at(term, "topologyKey"))
	}
	if at(term, "labelSelector", "matchLabels", "app.kubernetes.io/instance") != "narad" {
		t.Errorf("default: anti-affinity does not select this release's pods: %v", term)
	}
	if at(affinity("--set", "podAntiAffinityPreset=hard"), "podAntiAffinity", "requiredDuringSchedulingIgnoredDuringExecution") == nil {
		t.Error(`podAntiAffinityPreset=hard: no required anti-affinity`)
	}
	if a := affinity("--set", "podAntiAffinityPreset="); a != nil {
		t.Errorf(`podAntiAffinityPreset="": want no affinity, got %v`, a)
	}
	own := affinity("--set", "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].key=disk",
		"--set", "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator=Exists")
	if b, _ := json.Marshal(own); at(own, "podAntiAffinity") != nil || at(own, "nodeAffinity") == nil {
		t.Errorf("affinity set: want it instead of the preset, got %s", b)
	}
}
