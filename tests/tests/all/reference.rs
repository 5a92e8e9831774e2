//! The benchmarks' native reference (`benches/reference`) answers the booking list with the
//! same bytes as `rentald`, so that the ratio `scripts/bench` reports between them compares
//! the same work.

use rentald_tests::on_both_backends;

const TENANT: &str = "demo";

on_both_backends! {
    async fn the_native_reference_answers_the_booking_list_byte_for_byte(app: TestApp) {
        let token = app.tenant_with_token(TENANT, true).await;
        let reference = app.start_reference().await;
        let queries = [
            "limit=1",
            "limit=30",
            "",
            "sortDirectionAsc=false&limit=30",
            "sortDirectionAsc=false&offset=60&limit=5",
            "status=5&limit=7&offset=3",
            "status=2",
            "offset=40&limit=100",
            "offset=100000",
        ];
        for query in queries {
            let path = format!("/api/bookings/list?{query}");
            let served = app.get(TENANT, &path, &token).await;
            assert_eq!(served.status(), 200, "{query}");
            let served = served.bytes().await.unwrap();
            let native = app
                .client
                .get(format!("http://{}{path}", reference.addr))
                .header("Host", format!("{TENANT}.localhost"))
                .send()
                .await
                .unwrap();
            assert_eq!(native.status(), 200, "{query}");
            let native = native.bytes().await.unwrap();
            assert!(served.len() > 50, "{query}: a page, not an error");
            assert_eq!(
                String::from_utf8_lossy(&served),
                String::from_utf8_lossy(&native),
                "{query}"
            );
        }
    }
}
