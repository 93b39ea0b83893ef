// The release the node tier upgrades from (upgrade.test.ts): main as it was just before
// ResourceDistribution was served as apps.kruise.io/v1beta1 — d6fc1a4 is the first parent of the
// merge that brought v1beta1 (ee0004a), so its CRD serves and stores v1alpha1 only and has no
// conversion webhook. Its image and chart are built from this commit (release-image.ts).
export const PREVIOUS_RELEASE = 'd6fc1a4110580a562bb7f2ccbf9b2df660520707';
