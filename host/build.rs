fn main() {
    // The migrations are embedded by `sqlx::migrate!`: build again when one is added.
    println!("cargo:rerun-if-changed=migrations");
}
