package judge

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"slices"
	"strings"
	"testing"

	"ctrljudge/judge/ctrl"
	"ctrljudge/judge/exercise"
	"ctrljudge/judge/family/confighash"
	"ctrljudge/judge/verdict"
)

// These tests drive the confighash model with native reconcilers (see
// sim_test.go): the reference passes under every fault exercise 174 plans,
// and wrong controllers fail with the oracle and words a learner should see.

func TestConfigHashDefinition(t *testing.T) {
	cases := []struct {
		data map[string]string
		want string
	}{
		// printf 'a=1\nb=2\n' | sha256sum
		{map[string]string{"b": "2", "a": "1"}, "4a73850fde34aad40ff8649b93a66523a5fe744357a3931caea0f10609d0d930"},
		// printf '' | sha256sum
		{nil, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
		// printf '0=7\nA=4\nB=6\na=2\na-b=5\na.b=3\nb=1\n' | sha256sum
		{map[string]string{"b": "1", "a": "2", "a.b": "3", "A": "4", "a-b": "5", "B": "6", "0": "7"},
			"0cb5b402911d032b6c687d013b255895e836386a4d0d81b0fec64b91f480ba93"},
	}
	for _, c := range cases {
		if got := confighash.ConfigHash(c.data); got != c.want {
			t.Errorf("configHash(%v) = %s, want %s", c.data, got, c.want)
		}
	}
	// The newline keeps a value from running into the next key.
	if confighash.ConfigHash(map[string]string{"a": "1b=2"}) == confighash.ConfigHash(map[string]string{"a": "1", "b": "2"}) {
		t.Error("{a: 1b=2} and {a: 1, b: 2} hash alike")
	}
}

const hashCM = `
apiVersion: v1
kind: ConfigMap
metadata: {name: web-config}
data: {b: "2", a: "1"}
`

// hashDeployment is a Deployment naming config ("" for none), with hash
// on its template ("" for none).
func hashDeployment(name, config, hash string) string {
	y := "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: " + name + "\n"
	if config != "" {
		y += "  annotations: {\"ctrljudge.dev/config\": " + config + "}\n"
	}
	y += "spec:\n  replicas: 1\n  selector: {matchLabels: {app: " + name + "}}\n  template:\n    metadata:\n      labels: {app: " + name + "}\n"
	if hash != "" {
		y += "      annotations: {\"ctrljudge.dev/config-hash\": " + hash + "}\n"
	}
	return y + "    spec: {containers: [{name: app, image: v1}]}\n"
}

const hashAB = "4a73850fde34aad40ff8649b93a66523a5fe744357a3931caea0f10609d0d930"

// hashWork: an edit, a switch to another ConfigMap, that one deleted, the
// first one edited again.
const hashWork = `- patch: {ConfigMap/web-config: {data: {b: "3"}}}
- apply: |
    apiVersion: v1
    kind: ConfigMap
    metadata: {name: other}
    data: {mode: fast}
- patch: {Deployment/web: {metadata: {annotations: {"ctrljudge.dev/config": other}}}}
- delete: ConfigMap/other
- patch: {ConfigMap/web-config: {data: {c: "9"}}}`

func hashWorld() string {
	return hashCM + hashDeployment("web", "web-config", hashAB) + hashDeployment("api", "web-config", "") +
		hashDeployment("batch", "", "set-by-hand")
}

func hashSuite(t *testing.T, objects, steps, faults, expect string) *exercise.Exercise {
	t.Helper()
	return suiteWith(t, "{for: Deployment, watches: [ConfigMap]}", "confighash", objects, steps, faults, expect)
}

// hashOptions vary the reference into the mistakes exercise 174's mutants
// make.
type hashOptions struct {
	descending      bool // sort keys largest first
	alwaysWrite     bool // skip the comparison
	keepStale       bool // leave the hash when the ConfigMap is gone
	onMetadata      bool // hash on the Deployment's own annotations
	swallowConflict bool // return nil on a Conflict
	tidyUnnamed     bool // treat "no config annotation" as "ConfigMap gone"
	writeConfigMap  bool // "helps" by stamping the ConfigMap too
}

func hashRef(o hashOptions) func() ctrl.Reconciler {
	// The hash is the model's, which TestConfigHashDefinition pins to
	// values computed by hand with sha256sum, not a second copy of the
	// solution's; the descending mistake is its own small function.
	hash := confighash.ConfigHash
	if o.descending {
		hash = func(data map[string]string) string {
			keys := slices.Sorted(maps.Keys(data))
			slices.Reverse(keys)
			var b strings.Builder
			for _, k := range keys {
				b.WriteString(k + "=" + data[k] + "\n")
			}
			sum := sha256.Sum256([]byte(b.String()))
			return hex.EncodeToString(sum[:])
		}
	}
	return func() ctrl.Reconciler {
		return func(ctx context.Context, c ctrl.Client, req ctrl.Request) (ctrl.Result, error) {
			var d ctrl.Deployment
			if err := c.Get(ctx, req.NamespacedName, &d); err != nil {
				if ctrl.IsNotFound(err) {
					return ctrl.Result{}, nil
				}
				return ctrl.Result{}, err
			}
			name := d.Annotations[confighash.ConfigAnnotation]
			if name == "" && !o.tidyUnnamed {
				return ctrl.Result{}, nil
			}
			want, exists := "", false
			var cm ctrl.ConfigMap
			switch err := c.Get(ctx, ctrl.ObjectKey{Namespace: d.Namespace, Name: name}, &cm); {
			case err == nil:
				want, exists = hash(cm.Data), true
			case !ctrl.IsNotFound(err):
				return ctrl.Result{}, err
			}
			if o.writeConfigMap && exists {
				if cm.Annotations == nil {
					cm.Annotations = map[string]string{}
				}
				cm.Annotations[confighash.HashAnnotation] = want
				if err := c.Update(ctx, &cm); err != nil {
					return ctrl.Result{}, err
				}
			}
			anns := &d.Spec.Template.Annotations
			if o.onMetadata {
				anns = &d.Annotations
			}
			have, has := (*anns)[confighash.HashAnnotation]
			if !exists && o.keepStale {
				return ctrl.Result{}, nil
			}
			if has == exists && have == want && !o.alwaysWrite {
				return ctrl.Result{}, nil
			}
			if exists {
				if *anns == nil {
					*anns = map[string]string{}
				}
				(*anns)[confighash.HashAnnotation] = want
			} else {
				delete(*anns, confighash.HashAnnotation)
			}
			err := c.Update(ctx, &d)
			if ctrl.IsConflict(err) && o.swallowConflict {
				return ctrl.Result{}, nil
			}
			return ctrl.Result{}, err
		}
	}
}

func TestConfigHashReferenceSurvivesEveryPlannedFault(t *testing.T) {
	faults := "coalesce, duplicate, restart, crash-after-write, conflict, missed-event"
	ex := hashSuite(t, hashWorld(), hashWork, faults, "")
	fired := map[verdict.Fault]int{}
	for seed := uint64(1); seed <= 30; seed++ {
		r := run(ex, seed, hashRef(hashOptions{}))
		mustPass(t, r)
		for _, f := range r.FaultClasses {
			fired[f]++
		}
	}
	for _, f := range strings.Split(faults, ", ") {
		if fired[verdict.Fault(f)] < 20 {
			t.Errorf("fault %s fired in only %d of 30 seeds", f, fired[verdict.Fault(f)])
		}
	}
}

func TestConfigHashExactWrites(t *testing.T) {
	ex := hashSuite(t, hashWorld(), hashWork, "", `{writes: [
    "update Deployment config-hash 4a73850f",
    "update Deployment config-hash a28c07eb", "update Deployment config-hash a28c07eb",
    "update Deployment config-hash d9117002",
    "update Deployment no config-hash",
    "update Deployment config-hash 1261ae43"]}`)
	r := run(ex, 1, hashRef(hashOptions{}))
	mustPass(t, r)
	if got := confighash.ConfigHash(map[string]string{"a": "1", "b": "3", "c": "9"}); !strings.HasPrefix(got, "1261ae43") {
		t.Fatalf("the last write's hash is %s", got)
	}
}

func TestConfigHashOracles(t *testing.T) {
	cases := []struct {
		name, objects, steps, faults string
		opts                         hashOptions
		oracle, contains             string
	}{
		{"sorts the wrong way", hashWorld(), "", "", hashOptions{descending: true},
			"convergence", "Deployment api's template says ctrljudge.dev/config-hash "},
		{"writes on every call", hashWorld(), "", "", hashOptions{alwaysWrite: true},
			"idempotency", "made 2 writes: update Deployment config-hash 4a73850f, update Deployment config-hash 4a73850f"},
		{"keeps a stale hash", hashWorld(), "- delete: ConfigMap/web-config", "", hashOptions{keepStale: true},
			"convergence", "Deployment api's template still says ctrljudge.dev/config-hash 4a73850f…, but ConfigMap web-config does not exist"},
		{"hash on the Deployment's metadata", hashWorld(), "", "", hashOptions{onMetadata: true},
			"safety", "metadata.annotations (the Deployment's own, not its template's) went from {ctrljudge.dev/config=web-config} to {ctrljudge.dev/config=web-config, ctrljudge.dev/config-hash=" + hashAB + "}"},
		{"touches a Deployment naming no ConfigMap", hashWorld(), "", "", hashOptions{tidyUnnamed: true},
			"safety", "updated Deployment batch, which names no ConfigMap"},
		{"writes a ConfigMap", hashWorld(), "", "", hashOptions{writeConfigMap: true},
			"safety", "wrote to ConfigMap web-config (update)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := run(hashSuite(t, c.objects, c.steps, c.faults, ""), 1, hashRef(c.opts))
			mustFail(t, r, c.oracle)
			if !strings.Contains(r.Message, c.contains) {
				t.Errorf("message %q lacks %q", r.Message, c.contains)
			}
			if r.Hint != confighash.ConfigHashHints[verdict.Oracle(c.oracle)] {
				t.Errorf("hint %q, want the model's own", r.Hint)
			}
		})
	}
}

// A conflict given up on: the other writer's own event brings the
// Deployment back, so the hash is written after all and the end state
// cannot tell; the rule that a Conflict is passed on catches it, at every
// seed.
func TestConfigHashSwallowedConflictIsLost(t *testing.T) {
	objs := hashCM + hashDeployment("web", "web-config", hashAB) + hashDeployment("api", "web-config", hashAB)
	ex := hashSuite(t, objs, `- patch: {ConfigMap/web-config: {data: {b: "3"}}}`, "conflict", "")
	ex.Suite.Rules.PassOnConflicts = true
	for seed := uint64(1); seed <= 20; seed++ {
		mustPass(t, run(ex, seed, hashRef(hashOptions{})))
		mustFail(t, run(ex, seed, hashRef(hashOptions{swallowConflict: true})), "swallowed_conflict")
	}
}

func TestConfigHashDescribe(t *testing.T) {
	r := run(hashSuite(t, hashWorld(), "", "", ""), 1, func() ctrl.Reconciler {
		return func(context.Context, ctrl.Client, ctrl.Request) (ctrl.Result, error) { return ctrl.Result{}, nil }
	})
	mustFail(t, r, "convergence")
	want := []string{
		"the test starts with ConfigMap web-config (data a=1, b=2, hash 4a73850f)",
		"the test starts with Deployment web (config web-config, config-hash 4a73850f)",
		"the test starts with Deployment api (config web-config, no config-hash)",
		"the test starts with Deployment batch (no config annotation, config-hash set-by-hand)",
	}
	for i, w := range want {
		if r.Trace[i].Event != w {
			t.Errorf("trace[%d] = %q, want %q", i, r.Trace[i].Event, w)
		}
	}
	if !strings.Contains(r.Message, "Deployment api's Pod template has no ctrljudge.dev/config-hash annotation, but ConfigMap web-config exists") {
		t.Errorf("message: %s", r.Message)
	}
}
