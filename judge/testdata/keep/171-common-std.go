package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	"ctrljudge/judge/ctrl"
)

// The reference solution of 171, calling on every reconcile what learners
// often call from the standard library: judging it records those
// functions in kept_functions.txt, so that a learner's module that
// uses them is judged pruned (judge/prune.go). The result goes nowhere.

// Reconcile moves one Deployment a single step closer to its spec. It
// decides from what it reads now, never from what it did before, so a
// restart, a repeated call or a lost event cannot lead it astray.
func Reconcile(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
	var d ctrl.Deployment
	err := c.Get(ctx, req.NamespacedName, &d)
	sink = commonStd(&d, err)
	if err != nil {
		if ctrl.IsNotFound(err) {
			// Deleted: the garbage collector removes its Pods.
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	if d.DeletionTimestamp != nil {
		return ctrl.Result{}, nil
	}

	var list ctrl.PodList
	if err := c.List(ctx, &list, ctrl.InNamespace(req.Namespace), ctrl.OwnedBy(&d)); err != nil {
		return ctrl.Result{}, err
	}
	pods, failed := livePods(list.Items)

	// A failed Pod never recovers; clear it before anything else so the
	// replacement is counted against a true total.
	if len(failed) > 0 {
		return ctrl.Result{}, deletePod(ctx, c, &failed[0], "failed")
	}

	image := ctrl.PodImage(&d.Spec.Template.Spec)
	total := int32(len(pods))
	available := countAvailable(pods, image)
	old := oldPods(pods, image)
	r := d.Spec.Replicas
	surge := d.Spec.Strategy.RollingUpdate.MaxSurge
	unavail := d.Spec.Strategy.RollingUpdate.MaxUnavailable

	switch {
	case available < r-unavail && total < r+surge:
		// Too few serving Pods, and room to add one.
		return ctrl.Result{}, createPod(ctx, c, &d)
	case len(old) > 0 && total >= r:
		// Enough Pods exist (or too many): retire the oldest-named stale one.
		// This also covers total > r+surge, which implies total >= r.
		return ctrl.Result{}, deletePod(ctx, c, &old[0], "old")
	case total < r:
		return ctrl.Result{}, createPod(ctx, c, &d)
	case total > r:
		victim := &pods[len(pods)-1]
		if len(old) > 0 {
			victim = &old[0]
		}
		return ctrl.Result{}, deletePod(ctx, c, victim, "extra")
	}
	// Converged: no write, so a repeated call is harmless.
	return ctrl.Result{}, nil
}

// livePods splits the listed Pods (sorted by name) into those that count
// and those that failed, skipping Pods already on their way out.
func livePods(items []ctrl.Pod) (live, failed []ctrl.Pod) {
	for _, p := range items {
		switch {
		case p.DeletionTimestamp != nil:
		case p.Status.Phase == ctrl.PodFailed:
			failed = append(failed, p)
		default:
			live = append(live, p)
		}
	}
	return live, failed
}

// countAvailable counts Pods that serve the desired version: a Ready Pod on
// an old image does not bring the rollout any closer.
func countAvailable(pods []ctrl.Pod, image string) int32 {
	var n int32
	for i := range pods {
		if ctrl.IsPodReady(&pods[i]) && ctrl.PodImage(&pods[i].Spec) == image {
			n++
		}
	}
	return n
}

// oldPods returns the Pods on another image, still sorted by name.
func oldPods(pods []ctrl.Pod, image string) []ctrl.Pod {
	var old []ctrl.Pod
	for _, p := range pods {
		if ctrl.PodImage(&p.Spec) != image {
			old = append(old, p)
		}
	}
	return old
}

// createPod creates one Pod from the Deployment's template, owned by it so
// that List with OwnedBy finds it and the garbage collector removes it.
func createPod(ctx context.Context, c ctrl.Client, d *ctrl.Deployment) error {
	spec := d.Spec.Template.Spec
	// Copy the slice: the template must not share memory with the new Pod.
	spec.Containers = slices.Clone(spec.Containers)
	pod := &ctrl.Pod{
		ObjectMeta: ctrl.ObjectMeta{
			GenerateName: d.Name + "-",
			Namespace:    d.Namespace,
			Labels:       maps.Clone(d.Spec.Template.Labels),
		},
		Spec: spec,
	}
	ctrl.SetControllerReference(d, pod)
	if err := c.Create(ctx, pod); err != nil {
		return err
	}
	ctrl.Log("created", pod.Name, "with", ctrl.PodImage(&spec))
	return nil
}

// deletePod deletes p; a NotFound means someone else got there first, which
// is the outcome we wanted.
func deletePod(ctx context.Context, c ctrl.Client, p *ctrl.Pod, why string) error {
	if err := c.Delete(ctx, p); err != nil && !ctrl.IsNotFound(err) {
		return err
	}
	ctrl.Log("deleted", why, "Pod", p.Name)
	return nil
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
