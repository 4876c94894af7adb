//! A wiki exported every night as a MediaWiki XML dump: each page a document named by its id,
//! so the next night's dump rewrites the pages edited or renamed, removes those deleted, and
//! keeps the rest; what a page shows is found by search, its categories and address with it.

use crate::cli::{index_json, quarry, text};

fn page(id: u32, title: &str, text: &str) -> String {
    format!(
        "<page><title>{title}</title><ns>0</ns><id>{id}</id><revision><id>{}</id>\
         <timestamp>2026-12-0{id}T08:00:00Z</timestamp><model>wikitext</model><format>text/x-wiki</format>\
         <text xml:space=\"preserve\">{text}</text></revision></page>\n",
        id + 100
    )
}

fn dump(pages: &[String]) -> String {
    format!(
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<mediawiki xmlns=\"http://www.mediawiki.org/xml/export-0.11/\" \
         version=\"0.11\" xml:lang=\"en\"><siteinfo><sitename>Harbour wiki</sitename>\
         <base>https://wiki.example.org/wiki/Main_Page</base><namespaces><namespace key=\"0\" case=\"first-letter\" />\
         <namespace key=\"14\" case=\"first-letter\">Category</namespace></namespaces></siteinfo>\n{}</mediawiki>\n",
        pages.concat()
    )
}

const LIGHTHOUSE: &str = "{{Infobox building|name=North light|height=31 m}}\n'''North light''' is a \
    [[lighthouse]] on the breakwater.&lt;ref&gt;Harbour records&lt;/ref&gt;\n\n== Keepers ==\n\
    * Ada Lovelace kept the lamp from 1840.\n[[Category:Lighthouses]]";
const TIDES: &str = "'''Tides''' at the quay rise twice a day.\n\n== Tables ==\n{| class=\"wikitable\"\n\
    ! Month !! Spring range\n|-\n| March || 5.2 m\n|}\n[[Category:Tides]]";
const PILOTS: &str = "Pilots board inbound ships at the fairway buoy.";

#[test]
fn a_nightly_dump_rewrites_the_pages_edited_and_removes_those_deleted() {
    let dir = tempfile::tempdir().unwrap();
    let (source, out) = (dir.path().join("export"), dir.path().join("snapshot"));
    std::fs::create_dir(&source).unwrap();
    let file = source.join("harbour-wiki.xml");
    let first_night = [
        page(1, "North light", LIGHTHOUSE),
        page(2, "Tides", TIDES),
        page(3, "Pilots", PILOTS),
    ];
    std::fs::write(&file, dump(&first_night)).unwrap();
    let first = index_json(source.to_str().unwrap(), &out);
    assert_eq!(
        (&first["documents_indexed"], &first["documents_failed"]),
        (&3.into(), &0.into()),
        "{first:#}"
    );

    let search = |query: &str| -> serde_json::Value {
        let output = quarry(&[
            "search",
            out.to_str().unwrap(),
            query,
            "--mode",
            "keyword",
            "--top-k",
            "1",
            "--json",
        ]);
        assert!(output.status.success(), "{}", text(&output.stderr));
        serde_json::from_slice::<serde_json::Value>(&output.stdout).unwrap()["chunks"][0].clone()
    };
    // The infobox's fields, the table and the text, without their markup; the page's address,
    // time and categories with it.
    let keeper = search("Ada Lovelace lamp");
    let metadata = &keeper["metadata"];
    assert!(
        metadata["uri"].as_str().unwrap().ends_with("/harbour-wiki.xml#page=1"),
        "{keeper:#}"
    );
    assert_eq!(metadata["title"], "North light");
    assert_eq!(metadata["tags"], serde_json::json!(["Lighthouses"]));
    assert_eq!(metadata["document"]["url"], "https://wiki.example.org/wiki/North_light");
    assert_eq!(metadata["document"]["date"], "2026-12-01T08:00:00Z");
    assert_eq!(metadata["heading_path"], serde_json::json!(["Keepers"]));
    assert_eq!(
        keeper["content"].as_str().unwrap().trim(),
        "Keepers\n\nAda Lovelace kept the lamp from 1840."
    );
    let height = search("height 31").to_string();
    assert!(height.contains("height | 31 m"), "{height}");
    assert!(!height.contains("Harbour records"), "a reference is left out: {height}");
    let spring = search("spring range March").to_string();
    assert!(
        spring.contains("Month | Spring range") && spring.contains("March | 5.2 m"),
        "{spring}"
    );

    // The next night: the tides page edited, the lighthouse renamed, the pilots page deleted.
    let second_night = [
        page(1, "North lighthouse", LIGHTHOUSE),
        page(2, "Tides", &TIDES.replace("twice a day", "twice a lunar day")),
    ];
    std::fs::write(&file, dump(&second_night)).unwrap();
    let second = index_json(source.to_str().unwrap(), &out);
    let delta = &second["delta"];
    assert_eq!(
        (
            &delta["documents_written"],
            &delta["documents_removed"],
            &delta["documents_unchanged"]
        ),
        (&2.into(), &1.into(), &0.into()),
        "{second:#}"
    );
    assert_eq!(second["documents_indexed"], 2, "{second:#}");
    assert!(search("lunar").to_string().contains("#page=2"));
    let renamed = search("Ada Lovelace lamp");
    assert!(
        renamed["metadata"]["uri"].as_str().unwrap().ends_with("#page=1"),
        "{renamed:#}"
    );
    assert_eq!(renamed["metadata"]["title"], "North lighthouse");
    assert_eq!(
        renamed["metadata"]["document"]["url"],
        "https://wiki.example.org/wiki/North_lighthouse"
    );
    let pilots = quarry(&[
        "search",
        out.to_str().unwrap(),
        "fairway buoy",
        "--mode",
        "keyword",
        "--json",
    ]);
    let pilots: serde_json::Value = serde_json::from_slice(&pilots.stdout).unwrap();
    assert_eq!(pilots["chunks"].as_array().map(Vec::len), Some(0), "{pilots:#}");

    // A third night with nothing changed keeps every page.
    let third = index_json(source.to_str().unwrap(), &out);
    assert_eq!(third["delta"]["documents_written"], 0, "{third:#}");
}
