//! Discovery in real directories: which roots, which skill wins a name,
//! what is skipped and reported.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::fs;
use std::path::{Path, PathBuf};

use toolgate_skills::{DiscoverOptions, Discovery, SkillError, SkillOrigin, discover};

/// Writes `<root>/<name>/SKILL.md` with a description saying where it is.
fn skill(root: &Path, name: &str, description: &str) -> PathBuf {
    let dir = root.join(name);
    fs::create_dir_all(&dir).unwrap();
    fs::write(
        dir.join("SKILL.md"),
        format!("---\nname: {name}\ndescription: {description}\n---\nBody of {name}.\n"),
    )
    .unwrap();
    dir
}

/// The skills found, as `name (origin): description`.
fn found(discovery: &Discovery) -> Vec<String> {
    discovery
        .skills
        .iter()
        .map(|s| format!("{} ({}): {}", s.name, s.origin, s.description))
        .collect()
}

fn errors(discovery: &Discovery) -> Vec<String> {
    discovery.errors.iter().map(ToString::to_string).collect()
}

/// A temporary directory, canonical (discovery reports canonical paths
/// for the workspace's roots).
fn tempdir() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = fs::canonicalize(dir.path()).unwrap();
    (dir, path)
}

#[test]
fn nearest_wins_from_the_workspace_up_to_the_git_root_then_home_then_config() {
    let (_tmp, tmp) = tempdir();
    let repo = tmp.join("repo");
    let workspace = repo.join("crates/app");
    let home = tmp.join("home");
    let config = tmp.join("config");
    fs::create_dir_all(repo.join(".git")).unwrap();
    fs::create_dir_all(&workspace).unwrap();

    // Above the repository: never read.
    skill(&tmp.join(".agents/skills"), "above", "above the git root");
    let nested = workspace.join(".agents/skills");
    let middle = repo.join("crates/.agents/skills");
    let top = repo.join(".agents/skills");
    let user = home.join(".agents/skills");
    let configured = config.join("skills");
    for (root, label) in [
        (&nested, "nested"),
        (&middle, "middle"),
        (&top, "top"),
        (&user, "user"),
        (&configured, "config"),
    ] {
        skill(root, "shared", label);
    }
    skill(&middle, "middle-only", "middle");
    skill(&top, "top-only", "top");
    skill(&top, "user-too", "top");
    skill(&user, "user-too", "user");
    skill(&user, "user-only", "user");
    skill(&configured, "user-only", "config");
    skill(&configured, "config-only", "config");

    let options = DiscoverOptions::new(&workspace)
        .home(&home)
        .config_dir(&config);
    let roots: Vec<(PathBuf, SkillOrigin)> = options
        .roots()
        .into_iter()
        .map(|r| (r.path, r.origin))
        .collect();
    assert_eq!(
        roots,
        [
            (nested.clone(), SkillOrigin::Workspace),
            (middle.clone(), SkillOrigin::Workspace),
            (top.clone(), SkillOrigin::Workspace),
            (user.clone(), SkillOrigin::User),
            (configured.clone(), SkillOrigin::Config),
        ]
    );

    let discovery = discover(&options);
    assert_eq!(errors(&discovery), Vec::<String>::new());
    assert_eq!(
        found(&discovery),
        [
            "config-only (config): config",
            "middle-only (workspace): middle",
            "shared (workspace): nested",
            "top-only (workspace): top",
            "user-only (user): user",
            "user-too (workspace): top",
        ]
    );
    let shared = &discovery.skills[2];
    assert_eq!(shared.dir, nested.join("shared"));
    assert_eq!(shared.file, nested.join("shared/SKILL.md"));
    assert_eq!(shared.body, "Body of shared.");
    // Hidden skills, in the order they were met: root by root, nearest
    // first, and by name within a root.
    assert_eq!(
        discovery.shadowed,
        [
            ("shared".to_owned(), middle.join("shared")),
            ("shared".to_owned(), top.join("shared")),
            ("shared".to_owned(), user.join("shared")),
            ("user-too".to_owned(), user.join("user-too")),
            ("shared".to_owned(), configured.join("shared")),
            ("user-only".to_owned(), configured.join("user-only")),
        ]
    );
}

#[test]
fn without_a_git_root_only_the_workspace_is_read() {
    let (_tmp, tmp) = tempdir();
    let workspace = tmp.join("plain/sub");
    fs::create_dir_all(&workspace).unwrap();
    skill(&tmp.join("plain/.agents/skills"), "parent", "not read");
    skill(&workspace.join(".agents/skills"), "here", "read");
    let discovery = discover(&DiscoverOptions::new(&workspace));
    assert_eq!(found(&discovery), ["here (workspace): read"]);
}

#[test]
fn a_git_file_marks_the_root_too() {
    // A worktree or a submodule has a `.git` file, not a directory.
    let (_tmp, tmp) = tempdir();
    let repo = tmp.join("worktree");
    fs::create_dir_all(repo.join("src")).unwrap();
    fs::write(repo.join(".git"), "gitdir: /elsewhere\n").unwrap();
    skill(&repo.join(".agents/skills"), "at-root", "read");
    skill(&tmp.join(".agents/skills"), "outside", "not read");
    let discovery = discover(&DiscoverOptions::new(repo.join("src")));
    assert_eq!(found(&discovery), ["at-root (workspace): read"]);
}

#[test]
fn a_home_inside_the_repository_is_the_users() {
    // A dotfiles repository at home: its skills are the user's own.
    let (_tmp, tmp) = tempdir();
    let home = tmp.join("home");
    let workspace = home.join("project");
    fs::create_dir_all(home.join(".git")).unwrap();
    fs::create_dir_all(&workspace).unwrap();
    skill(&home.join(".agents/skills"), "mine", "user");
    let options = DiscoverOptions::new(&workspace).home(&home);
    assert_eq!(options.roots().len(), 2);
    assert_eq!(found(&discover(&options)), ["mine (user): user"]);
}

#[test]
fn the_same_directory_is_read_once() {
    let (_tmp, home) = tempdir();
    skill(&home.join(".agents/skills"), "mine", "user");
    // The workspace is the home directory itself.
    let options = DiscoverOptions::new(&home).home(&home);
    let discovery = discover(&options);
    assert_eq!(options.roots().len(), 1);
    assert_eq!(found(&discovery), ["mine (user): user"]);
    assert!(discovery.shadowed.is_empty());
}

#[test]
fn broken_skills_are_reported_and_the_rest_found() {
    let (_tmp, ws) = tempdir();
    let root = ws.join(".agents/skills");
    skill(&root, "good", "fine");
    let bad = root.join("bad-yaml");
    fs::create_dir_all(&bad).unwrap();
    fs::write(
        bad.join("SKILL.md"),
        "---\nname: bad-yaml\ndescription: [open\nmore: x\n---\n",
    )
    .unwrap();
    let misnamed = root.join("misnamed");
    fs::create_dir_all(&misnamed).unwrap();
    fs::write(
        misnamed.join("SKILL.md"),
        "---\nname: other\ndescription: d\n---\n",
    )
    .unwrap();
    let warned = root.join("warned");
    fs::create_dir_all(&warned).unwrap();
    fs::write(
        warned.join("SKILL.md"),
        "---\nname: warned\ndescription: d\nversion: 2\n---\n",
    )
    .unwrap();
    // Not skills: no SKILL.md, a plain file, a hidden directory.
    fs::create_dir_all(root.join("notes")).unwrap();
    fs::write(root.join("README.md"), "skills live here").unwrap();
    skill(&root.join(".install-x1"), "half", "hidden");
    skill(&root, ".hidden", "hidden");

    let discovery = discover(&DiscoverOptions::new(&ws));
    assert_eq!(
        found(&discovery),
        ["good (workspace): fine", "warned (workspace): d"]
    );
    let bad_file = bad.join("SKILL.md");
    let misnamed_file = misnamed.join("SKILL.md");
    assert_eq!(
        errors(&discovery),
        [
            format!(
                "{}:4: invalid YAML in the frontmatter: did not find expected ',' or ']', while parsing a flow sequence",
                bad_file.display()
            ),
            format!(
                "{}:2: name \"other\" must be the name of the skill's directory, \"misnamed\"",
                misnamed_file.display()
            ),
        ]
    );
    let warnings: Vec<String> = discovery.warnings.iter().map(ToString::to_string).collect();
    assert_eq!(
        warnings,
        [format!(
            "{}:4: unknown key `version` is ignored",
            warned.join("SKILL.md").display()
        )]
    );
}

#[test]
fn at_most_the_configured_number_of_skills_per_root() {
    let (_tmp, ws) = tempdir();
    let root = ws.join(".agents/skills");
    for name in ["a", "b", "c"] {
        skill(&root, name, name);
    }
    fs::create_dir_all(root.join("aa-not-a-skill")).unwrap();
    let discovery = discover(&DiscoverOptions::new(&ws).max_skills_per_root(2));
    assert_eq!(found(&discovery), ["a (workspace): a", "b (workspace): b"]);
    assert_eq!(
        errors(&discovery),
        [format!(
            "{} holds more than 2 skills; the rest were not read",
            root.display()
        )]
    );
    assert!(matches!(
        discovery.errors[0],
        SkillError::TooManySkills { max: 2, .. }
    ));
}

#[test]
fn missing_directories_are_not_errors() {
    let (_tmp, tmp) = tempdir();
    let discovery = discover(
        &DiscoverOptions::new(tmp.join("ws"))
            .home(tmp.join("home"))
            .config_dir(tmp.join("config")),
    );
    assert!(discovery.skills.is_empty());
    assert!(discovery.errors.is_empty());
}

#[cfg(unix)]
#[test]
fn workspace_links_may_not_leave_their_skills_directory() {
    use std::os::unix::fs::symlink;

    let (_tmp, tmp) = tempdir();
    let ws = tmp.join("ws");
    let root = ws.join(".agents/skills");
    fs::create_dir_all(&root).unwrap();
    let outside = tmp.join("outside");
    skill(&outside, "escaped", "outside the workspace");
    skill(&outside, "file-link", "outside the workspace");
    // A skill directory linked out: refused.
    symlink(outside.join("escaped"), root.join("escaped")).unwrap();
    // A SKILL.md linked out from a real directory: refused.
    fs::create_dir_all(root.join("file-link")).unwrap();
    symlink(
        outside.join("file-link/SKILL.md"),
        root.join("file-link/SKILL.md"),
    )
    .unwrap();
    // A link that stays inside: followed.
    skill(&root.join(".store"), "inside", "linked within");
    symlink(root.join(".store/inside"), root.join("inside")).unwrap();

    let discovery = discover(&DiscoverOptions::new(&ws));
    assert_eq!(found(&discovery), ["inside (workspace): linked within"]);
    assert_eq!(
        errors(&discovery),
        [
            format!(
                "{} leads outside {} through a symbolic link; skipped",
                root.join("escaped").display(),
                root.display()
            ),
            format!(
                "{} leads outside {} through a symbolic link; skipped",
                root.join("file-link/SKILL.md").display(),
                root.display()
            ),
        ]
    );

    // The skills directory itself linked out: refused whole.
    let linked_root = tmp.join("linked-root");
    fs::create_dir_all(linked_root.join(".agents")).unwrap();
    symlink(&outside, linked_root.join(".agents/skills")).unwrap();
    let discovery = discover(&DiscoverOptions::new(&linked_root));
    assert!(discovery.skills.is_empty());
    assert_eq!(
        errors(&discovery),
        [format!(
            "{} leads outside {} through a symbolic link; skipped",
            linked_root.join(".agents/skills").display(),
            linked_root.display()
        )]
    );

    // The user's own links are followed wherever they lead.
    let home = tmp.join("home");
    let user = home.join(".agents/skills");
    fs::create_dir_all(&user).unwrap();
    symlink(outside.join("escaped"), user.join("escaped")).unwrap();
    let discovery = discover(&DiscoverOptions::new(tmp.join("empty")).home(&home));
    assert_eq!(found(&discovery), ["escaped (user): outside the workspace"]);
    assert!(discovery.errors.is_empty());
}
