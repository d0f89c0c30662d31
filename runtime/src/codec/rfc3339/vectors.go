//go:build ignore

// Writes vectors.jsonl: how Go's time.Parse(time.RFC3339, s) (what
// metav1.Time and metav1.MicroTime use) reads each input, for the Rust
// tests beside this file. Run from this directory:
//
//	go run vectors.go > vectors.jsonl
package main

import (
	"encoding/json"
	"math/rand"
	"os"
	"time"
)

type vector struct {
	In    string `json:"in"`
	Unix  *int64 `json:"unix,omitempty"`
	Nanos *int   `json:"nanos,omitempty"`
}

var seeds = []string{
	"2026-01-01T00:00:00Z", "1970-01-01T00:00:00Z", "1969-12-31T23:59:59Z",
	"0001-01-01T00:00:00Z", "0000-01-01T00:00:00Z", "9999-12-30T21:59:59Z",
	"2024-02-29T12:34:56Z", "2023-02-29T12:34:56Z", "2026-04-31T00:00:00Z",
	"2026-11-24T13:35:38.123456Z", "2026-11-24T13:35:38.1Z", "2026-11-24T13:35:38.123456789Z",
	"2026-11-24T13:35:38.1234567891234Z", "2026-11-24T13:35:38,5Z", "2026-11-24T13:35:38.Z",
	"2026-11-24T13:35:60Z", "2026-11-24T13:60:00Z", "2026-11-24T24:00:00Z", "2026-11-24T9:04:05Z",
	"2026-11-24t13:35:38Z", "2026-11-24T13:35:38z", "2026-11-24 13:35:38Z", "2026-11-24T13:35:38",
	"2026-11-24T13:35:38+02:00", "2026-11-24T13:35:38-08:30", "2026-11-24T13:35:38+24:00",
	"2026-11-24T13:35:38+24:60", "2026-11-24T13:35:38+25:00", "2026-11-24T13:35:38+00:61",
	"2026-11-24T13:35:38+0200", "2026-11-24T13:35:38+02", "2026-11-24T13:35:38Z07:00",
	"2026-11-24T13:35:38Zjunk", "+2026-11-24T13:35:38Z", "12026-11-24T13:35:38Z", "-001-01-01T00:00:00Z",
	"2026-1-24T13:35:38Z", "2026-11-4T13:35:38Z", "2026-11-24T13:5:38Z", "2026-11-24T13:35:8Z",
	"2026-13-01T00:00:00Z", "2026-00-01T00:00:00Z", "2026-01-00T00:00:00Z", "0000-01-01T00:00:00+00:01",
	"2026-11-24T13:35:38.000000001-23:59", "", "\"", "Z", "2026-11-24T13:35:38.5+01:00",
}

func main() {
	rng := rand.New(rand.NewSource(1))
	inputs := append([]string{}, seeds...)
	// Random edits of the seeds: a changed, dropped or doubled byte.
	alphabet := []byte("0123456789-:TZtz.,+ 9")
	for i := 0; i < 3000; i++ {
		b := []byte(seeds[rng.Intn(len(seeds))])
		if len(b) == 0 {
			continue
		}
		at := rng.Intn(len(b))
		switch rng.Intn(3) {
		case 0:
			b[at] = alphabet[rng.Intn(len(alphabet))]
		case 1:
			b = append(b[:at], b[at+1:]...)
		case 2:
			b = append(b[:at], append([]byte{b[at]}, b[at:]...)...)
		}
		inputs = append(inputs, string(b))
	}
	seen := map[string]bool{}
	out := json.NewEncoder(os.Stdout)
	for _, in := range inputs {
		if seen[in] {
			continue
		}
		seen[in] = true
		v := vector{In: in}
		if t, err := time.Parse(time.RFC3339, in); err == nil {
			unix, nanos := t.Unix(), t.Nanosecond()
			v.Unix, v.Nanos = &unix, &nanos
		}
		if err := out.Encode(v); err != nil {
			panic(err)
		}
	}
}
