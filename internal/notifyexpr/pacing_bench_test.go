package notifyexpr

import (
	"context"
	"testing"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/foreground"
)

// What pacing costs a slow template rendered in the evaluation child (about 170 ms of CPU
// unpaced), by how the server's requests come: none; one after another, each holding the
// request count for 1.5 ms with 100 µs between them (ingest's p50 and the gap of the
// one-client benchmark, BenchmarkIngestLatencyWithSlowTemplate); and a request that never ends.
// The requests here use no CPU, so the figure is the pacing's own share, the most a render
// gets beside a busy server: on saturated cores a child at nice 19 gets less.
func BenchmarkPacedOffloadedRender(b *testing.B) {
	entity, _ := SampleEntity(EntityAlerts, "")
	const loop = `{% for i in range(200) %}{% for j in range(200) %}{% endfor %}{% endfor %}{{ alert.status }}`
	ctx := Offloaded(context.Background())
	if _, err := RenderContext(ctx, `{{ alert.status }}`, entity); err != nil {
		b.Fatal(err)
	}
	for _, load := range []struct {
		name      string
		paced     bool
		hold, gap time.Duration
	}{
		{"unpaced", false, 0, 0},
		{"paced/no-requests", true, 0, 0},
		{"paced/requests=1.5ms,gaps=100µs", true, 1500 * time.Microsecond, 100 * time.Microsecond},
		{"paced/one-endless-request", true, time.Hour, 0},
	} {
		b.Run(load.name, func(b *testing.B) {
			stop, stopped := make(chan struct{}), make(chan struct{})
			go func() {
				defer close(stopped)
				for load.hold > 0 {
					foreground.Enter()
					select {
					case <-stop:
						foreground.Leave()
						return
					case <-time.After(load.hold):
					}
					foreground.Leave()
					time.Sleep(load.gap)
				}
			}()
			defer func() { close(stop); <-stopped }()
			ctx := Offloaded(context.Background())
			if load.paced {
				ctx = Offloaded(Paced(context.Background(), foreground.Serving))
			}
			for b.Loop() {
				if _, err := RenderContext(ctx, loop, entity); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
