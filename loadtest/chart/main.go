// Command chart draws docs/fanout.png from the JSON reports of
// `rwload fanout -json` (loadtest/fanout_bench.sh writes them): p99
// submit-to-receive latency against subscribers, one series per server and
// view kind, each run a dot and the series' median a line, on a log scale,
// with the targets as dashed lines. Standard library only: the text is a
// built-in 3×5 pixel font.
//
//	go run ./loadtest/chart -in loadtest/chart/results -out docs/fanout.png
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"log"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// report is the part of a fanout -json report the chart reads.
type report struct {
	Peer        string `json:"peer"`
	Subscribers int    `json:"subscribers"`
	Mix         string `json:"mix"`
	PerConn     int    `json:"per_connection"`
	Stalled     *struct {
		Connections int `json:"connections"`
	} `json:"stalled"`
	Rate float64 `json:"rate"`
	All  struct {
		Count int
		P99   float64 // nanoseconds
	} `json:"latency_all"`
}

type point struct{ subs, p99ms float64 }

func main() {
	in := flag.String("in", "loadtest/chart/results", "`dir` of fanout -json reports (*.json)")
	out := flag.String("out", "docs/fanout.png", "PNG `file` to write")
	flag.Parse()
	series, err := load(*in)
	if err != nil {
		log.Fatal(err)
	}
	img := draw(series)
	f, err := os.Create(*out)
	if err != nil {
		log.Fatal(err)
	}
	if err := png.Encode(f, img); err != nil {
		log.Fatal(err)
	}
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}
}

// mixName names a view mix such as "top:1" or "top:1,around:1": its kind,
// or "mixed" for several.
func mixName(mix string) string {
	kinds := strings.Split(mix, ",")
	if len(kinds) > 1 {
		return "mixed"
	}
	return strings.Split(kinds[0], ":")[0]
}

// load reads every report with writes and latency samples, grouped by
// series name (server and view mix).
func load(dir string) (map[string][]point, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("chart: no reports in %s", dir)
	}
	series := map[string][]point{}
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			return nil, err
		}
		var r report
		if err := json.Unmarshal(data, &r); err != nil {
			return nil, fmt.Errorf("chart: %s: %w", name, err)
		}
		if r.Rate == 0 || r.All.Count == 0 {
			continue // idle runs have no latency
		}
		key := fmt.Sprintf("%s %s, %.0f/s", r.Peer, mixName(r.Mix), r.Rate)
		if r.PerConn > 1 {
			key = fmt.Sprintf("%s %s %d per conn., %.0f/s", r.Peer, mixName(r.Mix), r.PerConn, r.Rate)
		}
		if r.Stalled != nil && r.Stalled.Connections > 0 {
			key += fmt.Sprintf(", +%d stalled", r.Stalled.Connections)
		}
		series[key] = append(series[key], point{float64(r.Subscribers), r.All.P99 / 1e6})
	}
	return series, nil
}

const (
	width, height          = 960, 600
	left, right, top, bott = 110, 40, 60, 80
	scale                  = 3               // font pixels
	yMin, yMax             = 10.0, 100_000.0 // ms, log scale
	xMax                   = 20_000.0
)

var (
	white   = color.RGBA{255, 255, 255, 255}
	black   = color.RGBA{0, 0, 0, 255}
	grey    = color.RGBA{210, 210, 210, 255}
	palette = []color.RGBA{{31, 119, 180, 255}, {214, 39, 40, 255}, {44, 160, 44, 255}, {148, 103, 189, 255}, {255, 127, 14, 255}, {23, 190, 207, 255}, {140, 86, 75, 255}, {227, 119, 194, 255}}
)

func px(subs float64) int { return left + int(subs/xMax*float64(width-left-right)) }

func py(ms float64) int {
	ms = min(max(ms, yMin), yMax)
	f := (math.Log10(ms) - math.Log10(yMin)) / (math.Log10(yMax) - math.Log10(yMin))
	return height - bott - int(f*float64(height-top-bott))
}

func draw(series map[string][]point) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, width, height))
	fill(img, img.Bounds(), white)
	for ms := yMin; ms <= yMax; ms *= 10 {
		hline(img, left, width-right, py(ms), grey, false)
		text(img, left-10-textWidth(msLabel(ms)), py(ms)-7, msLabel(ms), black)
	}
	for s := 0.0; s <= xMax; s += 5000 {
		vline(img, px(s), top, height-bott, grey)
		l := fmt.Sprintf("%d", int(s))
		text(img, px(s)-textWidth(l)/2, height-bott+10, l, black)
	}
	hline(img, left, width-right, height-bott, black, false)
	vline(img, left, top, height-bott, black)
	text(img, left, 20, "P99 SUBMIT-TO-RECEIVE LATENCY (MS, LOG) AGAINST SUBSCRIBERS", black)
	text(img, width/2-textWidth("SUBSCRIBERS")/2, height-bott+40, "SUBSCRIBERS", black)
	for _, t := range []struct {
		ms    float64
		label string
	}{{120, "TARGET TOP: 120 MS"}, {200, "TARGET AROUND: 200 MS"}} {
		hline(img, left, width-right, py(t.ms), black, true)
		text(img, px(11000), py(t.ms)-18, t.label, black)
	}
	names := make([]string, 0, len(series))
	for k := range series {
		names = append(names, k)
	}
	sort.Strings(names)
	for i, name := range names {
		c := palette[i%len(palette)]
		plot(img, series[name], c)
		y := top + 10 + i*22
		fill(img, image.Rect(left+20, y, left+36, y+15), c)
		text(img, left+44, y, strings.ToUpper(name), black)
	}
	return img
}

// plot draws each run as a dot and joins the medians per subscriber count.
func plot(img *image.RGBA, pts []point, c color.RGBA) {
	by := map[float64][]float64{}
	for _, p := range pts {
		by[p.subs] = append(by[p.subs], p.p99ms)
		fill(img, image.Rect(px(p.subs)-4, py(p.p99ms)-4, px(p.subs)+5, py(p.p99ms)+5), c)
	}
	xs := make([]float64, 0, len(by))
	for x := range by {
		xs = append(xs, x)
	}
	slices.Sort(xs)
	for i := 1; i < len(xs); i++ {
		line(img, px(xs[i-1]), py(median(by[xs[i-1]])), px(xs[i]), py(median(by[xs[i]])), c)
	}
}

func median(v []float64) float64 {
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

func msLabel(ms float64) string { return fmt.Sprintf("%d", int(ms)) }

func fill(img *image.RGBA, r image.Rectangle, c color.RGBA) {
	r = r.Intersect(img.Bounds())
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			img.SetRGBA(x, y, c)
		}
	}
}

func hline(img *image.RGBA, x0, x1, y int, c color.RGBA, dashed bool) {
	for x := x0; x <= x1; x++ {
		if !dashed || (x/8)%2 == 0 {
			img.SetRGBA(x, y, c)
		}
	}
}

func vline(img *image.RGBA, x, y0, y1 int, c color.RGBA) {
	for y := y0; y <= y1; y++ {
		img.SetRGBA(x, y, c)
	}
}

// line draws a 3-pixel-wide segment by stepping along its longer axis.
func line(img *image.RGBA, x0, y0, x1, y1 int, c color.RGBA) {
	n := max(abs(x1-x0), abs(y1-y0), 1)
	for i := 0; i <= n; i++ {
		x := x0 + (x1-x0)*i/n
		y := y0 + (y1-y0)*i/n
		fill(img, image.Rect(x-1, y-1, x+2, y+2), c)
	}
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}
