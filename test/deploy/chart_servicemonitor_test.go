package deploy

import "testing"

// TestChartServiceMonitorOnlyWhenEnabled: the ServiceMonitor is off by
// default (its CRD may not exist); enabled, it selects exactly one Service,
// one that publishes not-ready pods (their metrics are the ones that
// matter) and has the port it scrapes, and it carries the labels a
// Prometheus selects by. With tls.apiSecret it scrapes over HTTPS and
// verifies with the Secret's CA.
func TestChartServiceMonitorOnlyWhenEnabled(t *testing.T) {
	if got := kinds(render(t), "ServiceMonitor"); len(got) != 0 {
		t.Fatalf("default values render a ServiceMonitor: %v", got)
	}
	objs := render(t, "--set", "serviceMonitor.enabled=true", "--set", "serviceMonitor.labels.release=prom")
	sm := only(t, objs, "ServiceMonitor")
	if at(sm, "metadata", "labels", "release") != "prom" {
		t.Errorf("serviceMonitor.labels not on the ServiceMonitor: %v", at(sm, "metadata", "labels"))
	}
	sel, _ := at(sm, "spec", "selector", "matchLabels").(map[string]any)
	var matched []object
	for _, svc := range kinds(objs, "Service") {
		labels, _ := at(svc, "metadata", "labels").(map[string]any)
		all := len(sel) > 0
		for k, v := range sel {
			all = all && labels[k] == v
		}
		if all {
			matched = append(matched, svc)
		}
	}
	if len(matched) != 1 {
		t.Fatalf("the ServiceMonitor's selector %v matches %d Services, want 1", sel, len(matched))
	}
	svc := matched[0]
	if at(svc, "spec", "publishNotReadyAddresses") != true {
		t.Errorf("the scraped Service %v does not publish not-ready pods", at(svc, "metadata", "name"))
	}
	eps, _ := at(sm, "spec", "endpoints").([]any)
	if len(eps) != 1 {
		t.Fatalf("want one endpoint, got %v", eps)
	}
	port, _ := at(eps[0], "port").(string)
	if at(svc, "spec", "ports", "name="+port) == nil {
		t.Errorf("the endpoint scrapes port %q, which Service %v does not have", port, at(svc, "metadata", "name"))
	}
	if at(eps[0], "path") != "/metrics" || at(eps[0], "scheme") != "http" {
		t.Errorf("endpoint = %v, want http /metrics", eps[0])
	}

	tls := only(t, render(t, "--set", "serviceMonitor.enabled=true", "--set", "tls.apiSecret=api"), "ServiceMonitor")
	ep := at(tls, "spec", "endpoints").([]any)[0]
	if at(ep, "scheme") != "https" || at(ep, "tlsConfig", "ca", "secret", "name") != "api" || at(ep, "tlsConfig", "serverName") != "narad.ns.svc" {
		t.Errorf("with tls.apiSecret: endpoint = %v, want https verified with Secret api's CA for narad.ns.svc", ep)
	}
}
