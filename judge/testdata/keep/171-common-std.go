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
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// Reconcile is the reference solution's, after a call that uses what it
// computes nowhere.
func Reconcile(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
	d := &ctrl.Deployment{ObjectMeta: ctrl.ObjectMeta{Name: req.Name, Namespace: req.Namespace}}
	sink = commonStd(d, errors.New("an example"))
	return solutionReconcile(ctx, c, req)
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
