//! The `dev` script builds the platform's components by name: its list is checked against
//! `rental_platform::Component` rather than derived, so that the script stays plain bash.

use rental_platform::Component;

#[test]
fn dev_builds_every_platform_component() {
    let script =
        std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../dev"))
            .unwrap();
    let list = script
        .lines()
        .find_map(|line| line.strip_prefix("COMPONENTS=(")?.strip_suffix(')'))
        .expect("dev has a line COMPONENTS=(...)");
    assert_eq!(
        list.split_whitespace().collect::<Vec<_>>(),
        Component::ALL.map(Component::name),
        "dev's COMPONENTS are the platform's components, in order"
    );
}
