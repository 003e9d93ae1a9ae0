package confighash

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"slices"
	"strings"

	"ctrljudge/judge/ctrl"
	"ctrljudge/judge/family"
	"ctrljudge/judge/internal/text"
	"ctrljudge/judge/verdict"
)

// The annotations of exercise 174: a Deployment names its ConfigMap in
// its own metadata, and the controller stamps the hash of that ConfigMap's
// data on the Pod template, so that a config change is a spec change.
const (
	ConfigAnnotation = "ctrljudge.dev/config"
	HashAnnotation   = "ctrljudge.dev/config-hash"
)

// Family is the model: every Deployment naming a ConfigMap carries, in its
// Pod template's annotations, the hash of that ConfigMap's data, or no hash
// when the ConfigMap does not exist. The controller writes that one
// annotation and nothing else: no other field of a Deployment, no
// Deployment that names no ConfigMap, never a ConfigMap.
type Family struct{}

// ConfigHash is the hash the exercise defines: SHA-256, hex-encoded, of the
// entries sorted by key, each as key "=" value "\n".
func ConfigHash(data map[string]string) string {
	h := sha256.New()
	for _, k := range slices.Sorted(maps.Keys(data)) {
		h.Write([]byte(k + "=" + data[k] + "\n"))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// wantHash returns the hash Deployment d's template should carry and
// whether it should carry one at all, with the ConfigMap it comes from.
func wantHash(w family.World, d *ctrl.Deployment) (hash string, ok bool, cm *ctrl.ConfigMap) {
	name := d.Annotations[ConfigAnnotation]
	for _, o := range w.List(ctrl.KindConfigMap) {
		c := o.(*ctrl.ConfigMap)
		if c.Namespace == d.Namespace && c.Name == name && c.DeletionTimestamp == nil {
			return ConfigHash(c.Data), true, c
		}
	}
	return "", false, nil
}

// short abbreviates a hash for messages and write sequences; a value that
// is not a hash at all is shown whole.
func short(h string) string {
	if len(h) == 64 {
		return h[:8]
	}
	return h
}

func (Family) Converged(w family.World) (bool, string) {
	for _, o := range w.List(ctrl.KindDeployment) {
		d := o.(*ctrl.Deployment)
		name := d.Annotations[ConfigAnnotation]
		if d.DeletionTimestamp != nil || name == "" {
			continue // one naming no ConfigMap is safety's to guard
		}
		have, has := d.Spec.Template.Annotations[HashAnnotation]
		want, exists, _ := wantHash(w, d)
		switch {
		case exists && !has:
			return false, "Deployment " + d.Name + "'s Pod template has no " + HashAnnotation + " annotation, but ConfigMap " + name +
				" exists and its data hashes to " + short(want) + "… (spec.template.metadata.annotations is where the hash goes)."
		case exists && have != want:
			return false, "Deployment " + d.Name + "'s template says " + HashAnnotation + " " + short(have) + "…, but ConfigMap " + name +
				" hashes to " + short(want) + "… (its data is " + describeData(w, d) + "), so the template does not record the config its Pods should run with."
		case !exists && has:
			return false, "Deployment " + d.Name + "'s template still says " + HashAnnotation + " " + short(have) + "…, but ConfigMap " + name +
				" does not exist: with no config to hash, the annotation must be removed."
		}
	}
	return true, ""
}

// describeData renders the data of the ConfigMap d names, sorted by key.
func describeData(w family.World, d *ctrl.Deployment) string {
	_, _, cm := wantHash(w, d)
	if cm == nil {
		return "missing"
	}
	return renderData(cm.Data)
}

func renderData(data map[string]string) string {
	if len(data) == 0 {
		return "empty"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(data)) {
		parts = append(parts, k+"="+data[k])
	}
	return strings.Join(parts, ", ")
}

// CheckWrite: the only write allowed is an update of a Deployment naming a
// ConfigMap, and it may change that Deployment's template hash annotation
// and nothing else.
func (Family) checkWrite(w family.World, wr *family.Write) string {
	m := wr.Object.GetObjectMeta()
	kind := string(wr.Object.GetObjectKind())
	d, ok := wr.Object.(*ctrl.Deployment)
	if !ok || wr.Verb != "update" || wr.Before == nil {
		return "Your controller wrote to " + kind + " " + m.Name + " (" + wr.Verb + "). Its one write is an Update of a Deployment, " +
			"to set or remove the " + HashAnnotation + " annotation on the Pod template; the ConfigMaps and Deployments themselves are the user's."
	}
	before := wr.Before.(*ctrl.Deployment)
	if before.Annotations[ConfigAnnotation] == "" {
		return "Your controller updated Deployment " + d.Name + ", which names no ConfigMap (it has no " + ConfigAnnotation +
			" annotation). Such a Deployment is not this controller's business: leave it exactly as it is."
	}
	if a, b := withoutHash(before), withoutHash(d); a != b {
		return "Your update of Deployment " + d.Name + " changed more than the " + HashAnnotation + " annotation of spec.template.metadata: " +
			changedParts(before, d) + ". Everything else in the Deployment is the user's; change only that one annotation."
	}
	return ""
}

// withoutHash renders a Deployment's metadata and spec with the template
// hash annotation, resourceVersion and generation left out, the parts the
// controller may not change. Empty and missing maps render alike.
func withoutHash(d *ctrl.Deployment) string {
	c := ctrl.DeepCopy(d).(*ctrl.Deployment)
	delete(c.Spec.Template.Annotations, HashAnnotation)
	c.ResourceVersion, c.Generation = "", 0
	c.Status = ctrl.DeploymentStatus{}
	b, _ := json.Marshal(c) // maps marshal in key order
	return string(b)
}

// changedParts names, in plain words, where two Deployments differ outside
// the hash annotation.
func changedParts(a, b *ctrl.Deployment) string {
	var parts []string
	if !sameMap(a.Annotations, b.Annotations) {
		parts = append(parts, "metadata.annotations (the Deployment's own, not its template's) went from {"+
			renderData(a.Annotations)+"} to {"+renderData(b.Annotations)+"}")
	}
	ta, tb := copyWithout(a.Spec.Template.Annotations), copyWithout(b.Spec.Template.Annotations)
	if !sameMap(ta, tb) {
		parts = append(parts, "other template annotations went from {"+renderData(ta)+"} to {"+renderData(tb)+"}")
	}
	if a.Spec.Replicas != b.Spec.Replicas {
		parts = append(parts, "spec.replicas went from "+text.Itoa(a.Spec.Replicas)+" to "+text.Itoa(b.Spec.Replicas))
	}
	if len(parts) == 0 {
		parts = append(parts, "other fields of its metadata or spec differ")
	}
	return strings.Join(parts, "; ")
}

func copyWithout(m map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		if k != HashAnnotation {
			out[k] = v
		}
	}
	return out
}

func sameMap(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if x, ok := b[k]; !ok || x != v {
			return false
		}
	}
	return true
}

// Hint points a learner at the usual cause of each failure here.
func (Family) Hint(oracle verdict.Oracle) string { return ConfigHashHints[oracle] }

var ConfigHashHints = map[verdict.Oracle]string{
	verdict.OracleConvergence: "Hash the entries in sorted key order, each as key=value and a newline; put the hash in spec.template.metadata.annotations; remove it when the ConfigMap is gone; and return a failed Update's error so that it is retried.",
	verdict.OracleIdempotency: "Compare the hash you computed with the one already on the template, and call Update only when they differ. If the hashes you write keep changing while the ConfigMap does not, your entries are not hashed in sorted key order.",
	verdict.OracleSafety:      "Change only the template's config-hash annotation, and only on Deployments that name a ConfigMap; never write a ConfigMap.",
	verdict.OracleWrites:      "Write only when the template's hash differs from the ConfigMap's. If one ConfigMap gives different hashes on different calls (compare the writes listed), your entries are not hashed in sorted key order: ranging over a map changes order from one call to the next.",
	verdict.OracleErrors:      "A ConfigMap that does not exist is a normal state here, not an error: remove the hash and return nil.",
}

// Sample: desired is the Deployments naming a ConfigMap, actual those
// whose template carries a hash, ready those whose hash is right (or
// absent, as it should be).
func (Family) Sample(w family.World) (desired, actual, ready int) {
	for _, o := range w.List(ctrl.KindDeployment) {
		d := o.(*ctrl.Deployment)
		if d.Annotations[ConfigAnnotation] == "" {
			continue
		}
		desired++
		have, has := d.Spec.Template.Annotations[HashAnnotation]
		if has {
			actual++
		}
		if want, exists, _ := wantHash(w, d); has == exists && have == want {
			ready++
		}
	}
	return desired, actual, ready
}

// Describe says what a test's object starts with: the ConfigMap a
// Deployment names and its hash, a ConfigMap's data.
func (Family) Describe(o ctrl.Object) string {
	switch x := o.(type) {
	case *ctrl.Deployment:
		s := "no config annotation"
		if n := x.Annotations[ConfigAnnotation]; n != "" {
			s = "config " + n
		}
		if h, ok := x.Spec.Template.Annotations[HashAnnotation]; ok {
			return s + ", config-hash " + short(h)
		}
		return s + ", no config-hash"
	case *ctrl.ConfigMap:
		return "data " + renderData(x.Data) + ", hash " + short(ConfigHash(x.Data))
	}
	return ""
}

// Detail renders a written Deployment's template hash (its first eight
// hex digits) for write sequences.
func (Family) Detail(o ctrl.Object) string {
	d, ok := o.(*ctrl.Deployment)
	if !ok {
		return ""
	}
	if h, ok := d.Spec.Template.Annotations[HashAnnotation]; ok {
		return "config-hash " + short(h)
	}
	return "no config-hash"
}

// CheckWrite implements family.Family; none of this family's rules is a
// bound on a count.
func (f Family) CheckWrite(w family.World, wr *family.Write) (string, *verdict.Violation) {
	return f.checkWrite(w, wr), nil
}
