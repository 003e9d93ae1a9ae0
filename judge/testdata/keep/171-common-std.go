// A fragment, not a whole file: commonStdFiles inserts it into 171's
// reference solution, after its imports, and renames the solution's
// Reconcile to solutionReconcile. Its Reconcile calls the standard library
// as learners' controllers often do, then the solution's: judging it
// records those functions in kept_functions.txt, so that a learner's
// module that uses them is judged pruned (judge/prune.go). The package
// clause is here for gofmt; what follows it is inserted.

package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"
)

// Reconcile is the reference solution's, after a call that uses what it
// computes nowhere.
func Reconcile(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
	d := &ctrl.Deployment{ObjectMeta: ctrl.ObjectMeta{Name: req.Name, Namespace: req.Namespace}}
	sink = commonStd(d, errors.New("an example")) + commonRuntime(len(req.Name))
	return solutionReconcile(ctx, c, req)
}

// dnsLabel is a pattern, compiled at init as learners' often are.
var dnsLabel = regexp.MustCompile(`^([a-z0-9]([-a-z0-9]*[a-z0-9])?)$`)

type notReady struct{ name string }

func (e *notReady) Error() string { return e.name + " is not ready" }

// commonRuntime runs what the Go runtime does for ordinary code beyond the
// solution's: division by a number not known when compiling, maps past
// eight entries, goroutines with a channel, a mutex and a wait group,
// defer and recover, interfaces and type switches.
func commonRuntime(n int) string {
	d := n%7 + 1
	q, r := n/d, n%d
	q64, r64 := int64(n)/int64(d), int64(n)%int64(d)
	q32, u := int32(n)/int32(d), uint(n)/uint(d)+uint(n)%uint(d)
	big := map[string]int{}
	for i := range 40 {
		big["k"+strconv.Itoa(i)] = i
	}
	for i := range 30 {
		delete(big, "k"+strconv.Itoa(i))
	}
	ints := map[int]bool{}
	for i := range 20 {
		ints[i*q] = true
	}
	total := len(big) + len(ints)
	clear(big)
	var mu sync.Mutex
	var wg sync.WaitGroup
	results := make(chan int, 4)
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mu.Lock()
			total += i
			mu.Unlock()
			results <- i
		}()
	}
	wg.Wait()
	close(results)
	for v := range results {
		total += v
	}
	select {
	case v, ok := <-results:
		total += v + len(strconv.FormatBool(ok))
	default:
	}
	var err error = &notReady{"web"}
	var nr *notReady
	if errors.As(fmt.Errorf("wrapped: %w", err), &nr) {
		total++
	}
	var anything any = q64
	switch v := anything.(type) {
	case int64:
		total += int(v)
	case string:
		total += len(v)
	}
	func() {
		defer func() {
			if recover() != nil {
				total++
			}
		}()
		var m map[string]int
		m["nil map"] = 1 // panics, and is recovered
	}()
	labels := []string{"web-1", "Web_2", "db"}
	for _, l := range labels {
		if dnsLabel.MatchString(l) {
			total++
		}
	}
	parts := regexp.MustCompile(`^(\w+)-(\d+)$`).FindStringSubmatch("web-12")
	replaced := strings.NewReplacer("-", "_", ".", "_").Replace(strings.Map(unicode.ToUpper, "a-b.c"))
	enc := base64.StdEncoding.EncodeToString([]byte(replaced))
	dur, _ := time.ParseDuration("1m30s")
	f, _ := strconv.ParseFloat("2.5", 64)
	return fmt.Sprint(q, r, r64, q32, u, total, parts, enc, utf8.RuneCountInString(replaced), dur.Seconds()/f, math.Round(f), time.Duration(n)*time.Millisecond)
}

// sink keeps commonStd's result alive.
var sink string

type pair struct {
	Name  string
	Count int
}

// commonStd calls the standard library as learners' controllers do: to
// format and parse, sort, hash, compare, and wrap errors.
func commonStd(d *ctrl.Deployment, err error) string {
	var b strings.Builder
	labels := map[string]string{"app": d.Name, "tier": "web"}
	keys := slices.Sorted(maps.Keys(labels))
	vals := slices.Collect(maps.Values(labels))
	sort.Strings(vals)
	fmt.Fprintf(&b, "%s %d %v %q %x %t %5.2f %+v %T %v %p\n", d.Name, d.Spec.Replicas, keys, d.Namespace, "ab", d.DeletionTimestamp == nil, 1.5, pair{"a", 1}, d, labels, d)
	b.WriteString(fmt.Sprint(d.Spec.Replicas, vals, err) + fmt.Sprintln(time.Second))
	b.WriteByte('\n')
	werr := fmt.Errorf("reconciling %s/%s: %w", d.Namespace, d.Name, errors.New("boom"))
	var target interface{ Error() string }
	if errors.Is(werr, err) || errors.As(werr, &target) || errors.Unwrap(werr) != nil {
		b.WriteString(errors.Join(werr, err).Error())
	}
	n, perr := strconv.Atoi(strconv.Itoa(int(d.Spec.Replicas)))
	i64, _ := strconv.ParseInt(strconv.FormatInt(int64(n), 10), 10, 64)
	ok, _ := strconv.ParseBool(strconv.FormatBool(perr == nil))
	b.WriteString(strconv.Quote(d.Name) + strconv.FormatInt(i64, 16))
	parts := strings.Split("a,b,c", ",")
	b.WriteString(strings.Join(parts, "-") + strings.ToUpper(strings.ToLower(d.Name)) + strings.Repeat("x", 3))
	name := strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(d.Name+"-abc", "x"), "-abc"))
	before, after, found := strings.Cut(name, "-")
	if strings.HasPrefix(name, before) && strings.HasSuffix(name, after) && strings.Contains(name, "-") == found && ok {
		b.WriteString(strings.ReplaceAll(strings.Replace(name, "-", "_", 1), "_", "."))
	}
	b.WriteString(strconv.Itoa(strings.Index(name, "-") + strings.LastIndex(name, "-") + strings.Count(name, "-") + len(strings.Fields(" a b ")) + strings.Compare(name, "z")))
	if strings.EqualFold(name, strings.Title(name)) || strings.IndexFunc(name, unicode.IsDigit) >= 0 || unicode.IsLetter('a') {
		b.WriteString(strings.SplitN("a=b=c", "=", 2)[0])
	}
	pairs := []pair{{"b", 2}, {"a", 1}, {"c", 3}}
	sort.Slice(pairs, func(i, j int) bool { return pairs[i].Name < pairs[j].Name })
	sort.SliceStable(pairs, func(i, j int) bool { return pairs[i].Count > pairs[j].Count })
	slices.SortFunc(pairs, func(x, y pair) int { return strings.Compare(x.Name, y.Name) })
	slices.SortStableFunc(pairs, func(x, y pair) int { return x.Count - y.Count })
	ints := []int{3, 1, 2, 2}
	sort.Ints(ints)
	slices.Sort(ints)
	ints = slices.Compact(ints)
	ints = slices.Insert(ints, 0, 9)
	ints = slices.Delete(ints, 0, 1)
	slices.Reverse(ints)
	if slices.Contains(keys, "app") && slices.Index(keys, "tier") >= 0 && slices.IndexFunc(pairs, func(p pair) bool { return p.Count == 2 }) >= 0 && slices.Equal(ints, slices.Clone(ints)) {
		b.WriteString(strconv.Itoa(slices.Max(ints) + slices.Min(ints) + sort.SearchInts(ints, 2) + sort.SearchStrings(keys, "app")))
	}
	sort.Sort(sort.Reverse(sort.StringSlice(keys)))
	copied := maps.Clone(labels)
	maps.Copy(copied, map[string]string{"extra": "1"})
	if !maps.Equal(copied, labels) {
		delete(copied, "extra")
	}
	sum := sha256.Sum256([]byte(strings.Join(keys, "\n")))
	h := fnv.New32a()
	h.Write(sum[:])
	b.WriteString(hex.EncodeToString(sum[:8]) + strconv.FormatUint(uint64(h.Sum32()), 10))
	var buf bytes.Buffer
	buf.WriteString(d.Name)
	buf.WriteByte(' ')
	if data, jerr := json.Marshal(labels); jerr == nil {
		var back map[string]string
		if json.Unmarshal(data, &back) == nil && bytes.Contains(data, []byte("app")) {
			buf.Write(data)
		}
	}
	b.WriteString(buf.String())
	now := time.Now()
	later := now.Add(90 * time.Second)
	if later.After(now) && now.Before(later) && !now.Equal(later) && time.Since(now) >= 0 {
		b.WriteString(later.Sub(now).String() + now.UTC().Format(time.RFC3339) + strconv.FormatInt(now.Unix(), 10))
	}
	b.WriteString(strconv.FormatFloat(math.Max(math.Ceil(1.2), math.Floor(2.7))+math.Min(1, 2), 'f', 2, 64))
	return b.String()
}
