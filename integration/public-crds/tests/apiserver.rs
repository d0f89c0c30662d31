//! The dry run against the real apiserver (testenv): what it accepts and
//! refuses, with its reason, and that nothing is stored.

use k8s_client_public_crds::apiserver::{self, Verdict};
use k8s_client_public_crds::corpus;
use k8s_client_runtime::dynamic::DynamicClient;
use k8s_client_runtime::object::DynamicResource;
use k8s_client_runtime::rest::GetOptions;

fn crd(group: &str, field: &str) -> String {
    format!(
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: dryruns.{group}\n\
         spec:\n  group: {group}\n  scope: Namespaced\n  names: {{kind: DryRun, plural: dryruns}}\n  versions:\n  \
         - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n        type: object\n        \
         properties:\n          spec:\n            type: object\n            properties:\n              {field}\n"
    )
}

#[tokio::test]
async fn accepted_refused_with_the_reason_and_nothing_stored() {
    let dir = tempfile::tempdir().unwrap();
    let op = dir.path().join("op");
    std::fs::create_dir_all(&op).unwrap();
    std::fs::write(op.join("a-good.yaml"), crd("good.example.com", "size: {type: integer}")).unwrap();
    // An object field without a type: not structural.
    std::fs::write(op.join("b-untyped.yaml"), crd("untyped.example.com", "inline: {properties: {a: {type: string}}}"))
        .unwrap();
    let old = crd("old.example.com", "size: {type: integer}")
        .replace("apiextensions.k8s.io/v1", "apiextensions.k8s.io/v1beta1");
    std::fs::write(op.join("c-v1beta1.yaml"), old).unwrap();
    std::fs::write(
        op.join("d-template.yaml"),
        "kind: CustomResourceDefinition\nmetadata:\n  labels: {{- x }}\n    a: b\n",
    )
    .unwrap();
    let operators = corpus::load(dir.path()).unwrap();
    let crds: Vec<&corpus::Crd> = operators[0].crds.iter().collect();
    assert_eq!(crds.len(), 4);

    let env = k8s_client_testenv::TestEnv::shared();
    let client = apiserver::client(&env.kubeconfig_path()).unwrap();
    let verdicts = apiserver::dry_run(&client, &crds).await.unwrap();

    assert_eq!(verdicts[0], Verdict::Accepted);
    let Verdict::Refused(untyped) = &verdicts[1] else { panic!("{:?}", verdicts[1]) };
    assert!(untyped.contains("properties[spec].properties[inline].type"), "{untyped}");
    assert!(untyped.contains("must not be empty for specified object fields"), "{untyped}");
    let Verdict::Refused(old) = &verdicts[2] else { panic!("{:?}", verdicts[2]) };
    assert!(old.contains("v1beta1"), "{old}");
    let Verdict::Refused(template) = &verdicts[3] else { panic!("{:?}", verdicts[3]) };
    assert!(template.starts_with("not YAML"), "{template}");

    // dryRun=All: the accepted CRD was validated, not stored.
    let resource = DynamicResource {
        group: "apiextensions.k8s.io".into(),
        version: "v1".into(),
        kind: "CustomResourceDefinition".into(),
        plural: "customresourcedefinitions".into(),
        namespaced: false,
    };
    let crds_client = DynamicClient::all_with(client, &resource);
    let err = crds_client.get("dryruns.good.example.com", &GetOptions::default()).await.unwrap_err();
    assert!(err.is_not_found(), "{err}");
}
