// Package metrics holds every Prometheus metric Narad exports (prefix
// narad_), declared in one place and registered once per Metrics value,
// so a name can be found by grep and no two packages register the same
// series.
//
// Invariant: a scrape reads only in-memory values; nothing here opens a
// partition log or touches disk beyond what collectors hold.
package metrics
