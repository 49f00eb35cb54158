package history

// Sample is one point of GET /v1/topics/{topic}/stats/history: the
// figures, and the rates since the sample before (absent for the first
// and where a figure went backwards).
type Sample struct {
	AtMs          int64    `json:"at_ms"`
	HighWatermark uint64   `json:"high_watermark"`
	Frontier      uint64   `json:"consumer_frontier"`
	Backlog       uint64   `json:"backlog"`
	ProducePerS   *float64 `json:"produce_per_s,omitempty"`
	ConsumePerS   *float64 `json:"consume_per_s,omitempty"`
	Partial       bool     `json:"partial,omitempty"`
}

// Samples turns points (oldest first) into samples with rates: the
// high watermark's growth per second is the produce rate (records
// committed), the frontier's the consume rate (records settled).
func Samples(points []Point) []Sample {
	out := make([]Sample, len(points))
	for i, p := range points {
		out[i] = Sample{AtMs: p.At.UnixMilli(), HighWatermark: p.HighWatermark, Frontier: p.Frontier, Backlog: p.Backlog, Partial: p.Partial}
		if i == 0 {
			continue
		}
		prev := points[i-1]
		secs := p.At.Sub(prev.At).Seconds()
		if secs <= 0 || p.Partial || prev.Partial {
			continue
		}
		out[i].ProducePerS = rate(prev.HighWatermark, p.HighWatermark, secs)
		out[i].ConsumePerS = rate(prev.Frontier, p.Frontier, secs)
	}
	return out
}

func rate(from, to uint64, secs float64) *float64 {
	if to < from {
		return nil // went backwards: no honest rate
	}
	r := float64(to-from) / secs
	return &r
}
