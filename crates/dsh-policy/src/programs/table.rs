//! The rows of the program table. Adding a program is adding a row here
//! (its options, operands and examples); see [`super::Row`] for the
//! fields and [`crate::options`] for how options are written.
//!
//! A read-only row lists only options known to read: an option left out
//! makes the command not read-only, which is the safe mistake. An option
//! that writes, runs or reads a file says so (`=w`, `=x`, `=r`), so that
//! the same row gives the files for path rules and refuses code-running
//! options under allow rules.

use super::{files, git, grammars, net, tar, Kind, Row};
use Kind::{Acts, Edits, Interpreter, ReadOnly};

/// Options of `git diff`, `git log`, `git show` that only choose what to
/// show and how.
macro_rules! git_diff_options {
    () => {
        "-p/-u/--patch -s/--no-patch -U/--unified[=] --output-indicator-new= --output-indicator-old= \
         --output-indicator-context= --raw --patch-with-raw -t --indent-heuristic --no-indent-heuristic \
         --minimal --patience --histogram --anchored= --diff-algorithm= --stat[=] --compact-summary \
         --numstat --shortstat -X/--dirstat[=] --cumulative --dirstat-by-file[=] --summary \
         --patch-with-stat -z --name-only --name-status --submodule[=] --color[=] --no-color \
         --color-moved[=] --no-color-moved --color-moved-ws= --no-color-moved-ws --word-diff[=] \
         --word-diff-regex= --color-words[=] --no-renames --rename-empty --no-rename-empty --check \
         --ws-error-highlight= --full-index --binary --abbrev[=] -B/--break-rewrites[=] \
         -M/--find-renames[=] -C/--find-copies[=] --find-copies-harder -D/--irreversible-delete \
         -l= --diff-filter= -S= -G= --find-object= --pickaxe-all --pickaxe-regex -O=r -R \
         --relative[=] --no-relative -a/--text --ignore-cr-at-eol --ignore-space-at-eol \
         -b/--ignore-space-change -w/--ignore-all-space --ignore-blank-lines -I/--ignore-matching-lines= \
         --inter-hunk-context= -W/--function-context --exit-code --quiet --no-ext-diff --no-textconv \
         ^--ext-diff ^--textconv \
         --ignore-submodules[=] --src-prefix= --dst-prefix= --no-prefix --default-prefix \
         --line-prefix= --ita-invisible-in-index --ita-visible-in-index --cached --staged \
         --merge-base --no-index -1/--base -2/--ours -3/--theirs -0 -m -c --cc --dd \
         --combined-all-paths ^--remerge-diff --diff-merges= --no-diff-merges"
    };
}

/// Options of `git log` and `git show` that only choose commits and
/// their format.
macro_rules! git_log_options {
    () => {
        "-n/--max-count= --skip= --since= --after= --since-as-filter= --until= --before= \
         --author= --committer= --grep-reflog= --grep= --all-match --invert-grep \
         -i/--regexp-ignore-case --basic-regexp -E/--extended-regexp -F/--fixed-strings \
         -P/--perl-regexp --remove-empty --merges --no-merges --min-parents= --max-parents= \
         --no-min-parents --no-max-parents --first-parent --exclude-first-parent-only --not \
         --all --branches[=] --tags[=] --remotes[=] --glob= --exclude= --reflog ^--alternate-refs \
         --single-worktree --ignore-missing --bisect --stdin --cherry-mark --cherry-pick \
         --left-only --right-only --cherry -g/--walk-reflogs --merge --boundary --simplify-by-decoration \
         --show-pulls --full-history --dense --sparse --simplify-merges --ancestry-path[=] \
         --date-order --author-date-order --topo-order --reverse --no-walk[=] --do-walk \
         --pretty[=] --format= --abbrev-commit --no-abbrev-commit --oneline --encoding= \
         --expand-tabs[=] --no-expand-tabs --notes[=] --no-notes --show-notes[=] ^--show-signature \
         --relative-date --date= --parents --children --left-right --graph --show-linear-break[=] \
         --decorate[=] --no-decorate --decorate-refs= --decorate-refs-exclude= --source \
         --clear-decorations --use-mailmap --no-use-mailmap --mailmap --no-mailmap --full-diff \
         --log-size -L= --follow --no-follow -# --no-standard-notes --standard-notes"
    };
}

/// Options of grep, egrep and fgrep.
const GREP_OPTIONS: &str = "-E/--extended-regexp -F/--fixed-strings -G/--basic-regexp \
    -P/--perl-regexp -e/--regexp=p -f/--file=P -i/-y/--ignore-case --no-ignore-case \
    -v/--invert-match -w/--word-regexp -x/--line-regexp -c/--count --color[=] --colour[=] \
    -L/--files-without-match -l/--files-with-matches -m/--max-count= -o/--only-matching \
    -q/--quiet/--silent -s/--no-messages -b/--byte-offset -H/--with-filename -h/--no-filename \
    --label= -n/--line-number --line-buffered -T/--initial-tab -Z/--null -A/--after-context= \
    -B/--before-context= -C/--context= -# -a/--text --binary-files= -D/--devices= \
    -d/--directories= --exclude= --exclude-from=r --exclude-dir= --include= -r/--recursive \
    -R/--dereference-recursive -U/--binary -z/--null-data --help -V/--version";

/// Options of md5sum and its family.
const SUM_OPTIONS: &str = "-b/--binary -t/--text --tag -z/--zero --help --version \
    !-c/--check --ignore-missing --quiet --status --strict -w/--warn";

pub(crate) const ROWS: &[Row] = &[
    // ------------------------------------------------------------ files
    Row::new("ls|dir|vdir", ReadOnly)
        .grammar(grammars::ls)
        .complete()
        .opts(
            "-a/--all -A/--almost-all --author -b/--escape --block-size= -B/--ignore-backups -c -C \
             --color[=] -d/--directory -D/--dired -f -F --classify[=] --file-type --format= \
             --full-time -g --group-directories-first -G/--no-group -h/--human-readable --si \
             -H/--dereference-command-line --dereference-command-line-symlink-to-dir --hide= \
             --hyperlink[=] --indicator-style= -i/--inode -I/--ignore= -k/--kibibytes -l -L/--dereference \
             -m -n/--numeric-uid-gid -N/--literal -o -p -q/--hide-control-chars --show-control-chars \
             -Q/--quote-name --quoting-style= -r/--reverse -R/--recursive -s/--size -S --sort= \
             --time= --time-style= -t -T/--tabsize= -u -U -v -w/--width= -x -X -Z/--context \
             --zero -1 --help --version",
        )
        .operands("r*")
        .walks()
        .data()
        .examples(
            &["ls", "ls -la", "ls -la src/", "ls --color=never -1 a b", "ls -R ."],
            &["ls --some-unknown-option", "ls --col"],
        ),
    Row::new("cat", ReadOnly)
        .complete()
        .opts(
            "-A/--show-all -b/--number-nonblank -e -E/--show-ends -n/--number -s/--squeeze-blank \
             -t -T/--show-tabs -u -v/--show-nonprinting --help --version",
        )
        .operands("r*")
        .data()
        .examples(&["cat README.md", "cat -n a b", "cat -- -x"], &["cat --unknown f"]),
    Row::new("tac", ReadOnly)
        .complete()
        .opts("-b/--before -r/--regex -s/--separator= --help --version")
        .operands("r*")
        .data()
        .examples(&["tac log", "tac -s , f"], &["tac --x f"]),
    Row::new("head", ReadOnly)
        .complete()
        .opts("-c/--bytes= -n/--lines= -q/--quiet/--silent -v/--verbose -z/--zero-terminated -# --help --version")
        .operands("r*")
        .data()
        .examples(&["head -n 5 README.md", "head -5 f", "head -c100 f"], &["head --follow f"]),
    Row::new("tail", ReadOnly)
        .complete()
        .opts(
            "-c/--bytes= -f --follow[=] -F -n/--lines= --max-unchanged-stats= --pid= \
             -q/--quiet/--silent --retry -s/--sleep-interval= -v/--verbose -z/--zero-terminated -# \
             --help --version",
        )
        .operands("r*")
        .data()
        .examples(&["tail -n 20 log", "tail -f log", "tail -20 x"], &["tail --unknown x"]),
    Row::new("wc", ReadOnly)
        .opts("-c/--bytes -m/--chars -l/--lines !--files0-from=r -L/--max-line-length -w/--words --total= --help --version")
        .operands("r*")
        .data()
        .examples(&["wc -l src/main.rs", "wc"], &["wc --files0-from=list"]),
    Row::new("file", ReadOnly)
        .opts(
            "-b/--brief -c/--checking-printout -E -e/--exclude= --exclude-quiet= -F/--separator= \
             -h/--no-dereference -i/--mime --mime-type --mime-encoding -k/--keep-going -l/--list \
             -L/--dereference -m/--magic-file=l -N/--no-pad -n/--no-buffer -0/--print0 -r/--raw \
             -s/--special-files --extension --apple -P/--parameter= -v/--version --help",
        )
        .operands("r*")
        .data()
        .examples(&["file x.bin", "file -b --mime-type a"], &["file -C -m x", "file --com", "file -z x"]),
    Row::new("stat", ReadOnly)
        .complete()
        .opts("-L/--dereference -f/--file-system -c/--format= --printf= -t/--terse --cached= --help --version")
        .operands("r*")
        .data()
        .examples(&["stat -c %s f", "stat f"], &["stat --unknown f"]),
    Row::new("du", ReadOnly)
        .grammar(grammars::du)
        .opts(
            "-0/--null -a/--all --apparent-size -B/--block-size= -b/--bytes -c/--total \
             -D/--dereference-args -d/--max-depth= -H -h/--human-readable --inodes -k \
             -L/--dereference -l/--count-links -m -P/--no-dereference -S/--separate-dirs --si \
             -s/--summarize -t/--threshold= --time[=] --time-style= -X/--exclude-from=r --exclude= \
             -x/--one-file-system --help --version",
        )
        .operands("r*")
        .walks()
        .data()
        .examples(&["du -sh .", "du -a src"], &["du --files0-from=x"]),
    Row::new("df", ReadOnly)
        .opts(
            "-a/--all -B/--block-size= -h/--human-readable -H/--si -i/--inodes -k -l/--local \
             --no-sync --output[=] -P/--portability --sync -t/--type= -T/--print-type \
             -x/--exclude-type= --total --help --version",
        )
        .operands("r*")
        .data()
        .examples(&["df -h", "df -h ."], &["df --x"]),
    Row::new("tree", ReadOnly)
        .grammar(grammars::tree)
        .opts(
            "-a -d -l -f -x -L= -P= -I= --gitignore --gitfile=r --ignore-case --matchdirs --metafirst \
             --prune --info --infofile=r --noreport --charset= --filelimit= -o=w -q -N -Q -p -u -g -s \
             -h --si --du -D --timefmt= -F --inodes --device -v -t -c -U -r --dirsfirst --filesfirst \
             --sort= -i -A -S -n -C -X -J --nolinks --help --version",
        )
        .operands("r*")
        .walks()
        .data()
        .strict_bundles()
        .examples(
            &["tree", "tree -a -L 2", "tree -I target src"],
            &["tree -o out", "tree -To out", "tree -H x", "tree -R", "tree -ao out"],
        ),
    Row::new("find", ReadOnly)
        .any_words()
        .grammar(grammars::find)
        .examples(
            &["find . -name '*.rs'", "find src -type f -newer x", "find"],
            &["find . -delete", "find . -exec rm {} ;", "find . -fprint out", "find . -fls x"],
        ),
    Row::new("fd|fdfind", ReadOnly)
        .opts(
            "-H/--hidden -I/--no-ignore --no-ignore-vcs --no-ignore-parent -u/--unrestricted \
             -s/--case-sensitive -i/--ignore-case -g/--glob --regex -F/--fixed-strings -a/--absolute-path \
             -l/--list-details -L/--follow -p/--full-path -0/--print0 -d/--max-depth= --min-depth= \
             --exact-depth= --prune -t/--type= -e/--extension= -E/--exclude= --ignore-file=r -c/--color= \
             -j/--threads= -S/--size= --changed-within= --changed-before= -o/--owner= --max-results= \
             -1 -q/--quiet --show-errors --base-directory= --path-separator= --search-path= \
             --strip-cwd-prefix[=] --one-file-system --format= -h/--help -V/--version \
             -x/--exec=x -X/--exec-batch=x --batch-size=",
        )
        .operands("p? r*")
        .walks()
        .data()
        .examples(&["fd -e rs", "fd -H x src"], &["fd -x rm", "fd -Hx rm", "fd --exec-batch rm", "fd --exe rm"]),
    Row::new("realpath", ReadOnly)
        .complete()
        .opts("-e/--canonicalize-existing -m/--canonicalize-missing -L/--logical -P/--physical -q/--quiet --relative-to= --relative-base= -s/--strip/--no-symlinks -z/--zero --help --version")
        .operands("r*")
        .data()
        .examples(&["realpath x"], &["realpath --x y"]),
    Row::new("readlink", ReadOnly)
        .complete()
        .opts("-f/--canonicalize -e/--canonicalize-existing -m/--canonicalize-missing -n/--no-newline -q/--quiet -s/--silent -v/--verbose -z/--zero --help --version")
        .operands("r*")
        .data()
        .examples(&["readlink -f x"], &["readlink --x y"]),
    Row::new("basename", ReadOnly)
        .complete()
        .opts("-a/--multiple -s/--suffix= -z/--zero --help --version")
        .operands("d*")
        .data()
        .examples(&["basename /a/b.rs .rs"], &["basename --x"]),
    Row::new("dirname", ReadOnly)
        .complete()
        .opts("-z/--zero --help --version")
        .operands("d*")
        .data()
        .examples(&["dirname /a/b"], &["dirname --x"]),
    Row::new("pwd", ReadOnly)
        .opts("-L -P --help")
        .data()
        .examples(&["pwd", "pwd -P"], &["pwd x"]),
    // `cd` itself is followed by the walker, which places what follows.
    Row::new("cd|pushd|popd|dirs", ReadOnly)
        .opts("-L -P -e -@ -c -l -p -v -n")
        .operands("d?")
        .no_permute()
        .data()
        .examples(&["cd src", "cd"], &["cd a b"]),
    // ------------------------------------------------------------ search
    Row::new("grep|egrep|fgrep", ReadOnly)
        .complete()
        .grammar(grammars::grep)
        .opts(GREP_OPTIONS)
        .operands("p r*")
        .data()
        .examples(
            &["grep -rn foo src", "grep -e x -e y f", "grep -f pats x", "grep -c x f", "grep -A3 x f"],
            &["grep --unknown-long x f", "grep --colo x f"],
        ),
    Row::new("rg", ReadOnly)
        .opts(
            "-e/--regexp=p -f/--file=P -i/--ignore-case -S/--smart-case -s/--case-sensitive \
             -w/--word-regexp -x/--line-regexp -v/--invert-match -F/--fixed-strings -n/--line-number \
             -N/--no-line-number -l/--files-with-matches --files-without-match -c/--count --count-matches \
             -o/--only-matching -u/--unrestricted -g/--glob= --iglob= --glob-case-insensitive \
             -t/--type= -T/--type-not= --type-list --hidden --no-hidden -L/--follow -C/--context= \
             -A/--after-context= -B/--before-context= -m/--max-count= -d/--max-depth= --maxdepth= \
             --max-filesize= -j/--threads= --json --vimgrep --heading --no-heading --color= --colors= \
             -p/--pretty -H/--with-filename -I/--no-filename --column --no-column -0/--null \
             -r/--replace= --no-ignore --no-ignore-vcs --no-ignore-dot --no-ignore-global \
             --no-ignore-parent --no-ignore-exclude --no-ignore-files --ignore-file=r --files --sort= \
             --sortr= --stats --trim -M/--max-columns= --max-columns-preview -U/--multiline \
             --multiline-dotall -P/--pcre2 --engine= -a/--text --binary --passthru --debug --trace \
             -q/--quiet --no-messages --line-buffered --block-buffered -b/--byte-offset --crlf \
             -E/--encoding= --null-data --one-file-system --include-zero --field-match-separator= \
             --field-context-separator= --context-separator= --path-separator= --type-clear= \
             --no-config -h/--help -V/--version \
             --pre=x --hostname-bin=x --pre-glob= -z/--search-zip --type-add=",
        )
        .operands("p r*")
        .walks()
        .trees()
        .grammar(grammars::follow_option)
        .data()
        .examples(
            &["rg TODO", "rg -n 'fn main' --type rust", "rg -l x src"],
            &["rg --pre sh x", "rg --hostname-bin id x", "rg --pre=cat x", "rg --unknown x"],
        ),
    Row::new("ag", ReadOnly)
        .opts(
            "-i/--ignore-case -s/--case-sensitive -S/--smart-case -w/--word-regexp -v/--invert-match \
             -l/--files-with-matches -L/--files-without-matches -c/--count -Q/--literal -G/--file-search-regex= \
             -g= --hidden -u/--unrestricted -U/--skip-vcs-ignores --ignore= --ignore-dir= \
             -A/--after= -B/--before= -C/--context= --color --nocolor --nogroup --group --column \
             --nofilename --filename --noheading --heading -f/--follow -t/--all-text -a/--all-types \
             --depth= --vimgrep -m/--max-count= -o/--only-matching --stats --help --version \
             --pager=x",
        )
        .operands("p r*")
        .walks()
        .trees()
        .grammar(grammars::follow_option)
        .data()
        .examples(&["ag foo", "ag -i foo src"], &["ag --pager=sh x", "ag --pag sh x", "ag --pager sh x"]),
    Row::new("which", ReadOnly)
        .opts("-a --all -s --skip-alias --skip-functions --help --version")
        .operands("d*")
        .data()
        .examples(&["which cargo", "which -a ls"], &["which --read-functions x"]),
    Row::new("whereis", ReadOnly)
        .opts("-b -m -s -u -l -f -B= -M= -S=")
        .operands("d*")
        .no_permute()
        .data()
        .examples(&["whereis ls"], &["whereis -x y"]),
    Row::new("type", ReadOnly)
        .opts("-a -f -P -p -t")
        .operands("d*")
        .data()
        .examples(&["type ls"], &["type -z x"]),
    // ------------------------------------------------------------ text
    Row::new("echo|true|false|:", ReadOnly)
        .any_words()
        .examples(&["echo hi", "echo -n --help x", "true", "false x"], &[]),
    Row::new("printf", ReadOnly)
        .opts("!-v= --help --version")
        .operands("d d*")
        .no_permute()
        .data()
        .examples(&["printf '%s\\n' a b"], &["printf -v x %s 1"]),
    Row::new("sort", ReadOnly)
        .complete()
        .opts(
            "-b/--ignore-leading-blanks -d/--dictionary-order -f/--ignore-case -g/--general-numeric-sort \
             -i/--ignore-nonprinting -M/--month-sort -h/--human-numeric-sort -n/--numeric-sort \
             -R/--random-sort --random-source=r -r/--reverse --sort= -V/--version-sort -k/--key= \
             -t/--field-separator= -u/--unique -z/--zero-terminated -s/--stable -c --check[=] -C \
             -m/--merge -S/--buffer-size= --parallel= --batch-size= --debug --help --version \
             -o/--output=w --compress-program=x !--files0-from=r !-T/--temporary-directory=",
        )
        .operands("r*")
        .data()
        .examples(
            &["sort README.md", "sort -n -k2 f", "sort -rn a"],
            &["sort -o out a", "sort --files0-from=F", "sort --compress-program=sh a", "sort --outp=x a", "sort -T /tmp a", "sort $X a"],
        ),
    Row::new("uniq", ReadOnly)
        .complete()
        .opts(
            "-c/--count -d/--repeated -D --all-repeated[=] -f/--skip-fields= --group[=] -i/--ignore-case \
             -s/--skip-chars= -u/--unique -z/--zero-terminated -w/--check-chars= -# --help --version",
        )
        .operands("r? w?")
        .data()
        .examples(&["uniq -c", "uniq a"], &["uniq a b", "uniq -c IN OUT"]),
    Row::new("cut", ReadOnly)
        .complete()
        .opts("-b/--bytes= -c/--characters= -d/--delimiter= -f/--fields= -n --complement -s/--only-delimited --output-delimiter= -z/--zero-terminated --help --version")
        .operands("r*")
        .data()
        .examples(&["cut -d / -f2 f", "cut -c1-5"], &["cut --x f"]),
    Row::new("tr", ReadOnly)
        .complete()
        .opts("-c/-C/--complement -d/--delete -s/--squeeze-repeats -t/--truncate-set1 --help --version")
        .operands("d d?")
        .data()
        .examples(&["tr a-z A-Z", "tr -d '\\r'"], &["tr a b c"]),
    Row::new("nl", ReadOnly)
        .complete()
        .opts("-b/--body-numbering= -d/--section-delimiter= -f/--footer-numbering= -h/--header-numbering= -i/--line-increment= -l/--join-blank-lines= -n/--number-format= -p/--no-renumber -s/--number-separator= -v/--starting-line-number= -w/--number-width= --help --version")
        .operands("r*")
        .data()
        .examples(&["nl f"], &["nl --x f"]),
    Row::new("od", ReadOnly)
        .complete()
        .opts("-A/--address-radix= -j/--skip-bytes= -N/--read-bytes= -S= --strings[=] -t/--format= -v/--output-duplicates -w/--width[=] -a -b -c -d -f -i -l -o -s -x --endian= --traditional --help --version")
        .operands("r*")
        .data()
        .examples(&["od -c f"], &["od --x f"]),
    Row::new("hexdump|hd", ReadOnly)
        .opts("-b -c -C -d -o -x -e= -f=r -n= -s= -v -L[=] --help --version")
        .operands("r*")
        .data()
        .examples(&["hexdump -C f"], &["hexdump -z f"]),
    Row::new("xxd", ReadOnly)
        .any_words()
        .grammar(grammars::xxd)
        .examples(&["xxd f", "xxd -l 64 f"], &["xxd -r f out", "xxd f out", "xxd -pl README.md out.txt", "xxd -ps f out"]),
    Row::new("strings", ReadOnly)
        .opts("-a/--all -d/--data -f/--print-file-name -n/--bytes= -t/--radix= -e/--encoding= -o -w/--include-all-whitespace -s/--output-separator= -T/--target= -U/--unicode= -# --help -v/-V/--version")
        .operands("r*")
        .data()
        .at_files()
        .examples(&["strings x.bin"], &["strings @args", "strings --x f"]),
    Row::new("column", ReadOnly)
        .complete()
        .opts("-t/--table -s/--separator= -o/--output-separator= -c/--output-width= -x/--fillrows -n= -e -J/--json -N/--table-columns= -R/--table-right= -T/--table-truncate= -W/--table-wrap= -H/--table-hide= -O/--table-order= -r/--tree= -E/--table-noextreme= -d/--table-noheadings -l/--table-columns-limit= -L/--keep-empty-lines --help --version")
        .operands("r*")
        .data()
        .examples(&["column -t f"], &["column --x f"]),
    Row::new("cmp", ReadOnly)
        .complete()
        .opts("-b/--print-bytes -i/--ignore-initial= -l/--verbose -n/--bytes= -s/--quiet/--silent --help -v/--version")
        .operands("r r? d*")
        .data()
        .examples(&["cmp a b"], &["cmp --x a b"]),
    Row::new("diff", ReadOnly)
        .complete()
        .grammar(grammars::diff)
        .opts(
            "-q/--brief -s/--report-identical-files -c -C= --context[=] -u -U= --unified[=] -e/--ed \
             -n/--rcs -y/--side-by-side -W/--width= --left-column --suppress-common-lines \
             -p/--show-c-function -F/--show-function-line= -t/--expand-tabs -T/--initial-tab \
             --tabsize= --suppress-blank-empty -r/--recursive -N/--new-file --unidirectional-new-file \
             --ignore-file-name-case --no-ignore-file-name-case -x/--exclude= -X/--exclude-from=r \
             -S/--starting-file= --from-file=r --to-file=r -i/--ignore-case -E/--ignore-tab-expansion \
             -Z/--ignore-trailing-space -b/--ignore-space-change -w/--ignore-all-space \
             -B/--ignore-blank-lines -I/--ignore-matching-lines= -a/--text --strip-trailing-cr \
             -D/--ifdef= --line-format= --old-line-format= --new-line-format= --unchanged-line-format= \
             --old-group-format= --new-group-format= --changed-group-format= --unchanged-group-format= \
             -d/--minimal --horizon-lines= --speed-large-files --color[=] --palette= --normal \
             !-l/--paginate \
             --no-dereference --help -v/--version",
        )
        .operands("r*")
        .data()
        .examples(&["diff a b", "diff -u a b", "diff -ru a b"], &["diff --x a b", "diff -l a b"]),
    Row::new("comm", ReadOnly)
        .complete()
        .opts("-1 -2 -3 --check-order --nocheck-order --output-delimiter= --total -z/--zero-terminated --help --version")
        .operands("r r")
        .data()
        .examples(&["comm -12 a b"], &["comm --x a b"]),
    Row::new("jq", ReadOnly)
        .grammar(grammars::jq)
        .complete()
        .opts(
            "-n/--null-input -R/--raw-input -s/--slurp -r/--raw-output --raw-output0 -j/--join-output \
             -a/--ascii-output -c/--compact-output -C/--color-output -M/--monochrome-output -S/--sort-keys \
             --tab --indent= --seq --stream --stream-errors -e/--exit-status --arg=dd --argjson=dd \
             --slurpfile=dr --rawfile=dr --args --jsonargs -f/--from-file=x -L=r --unbuffered \
             -h/--help -V/--version --build-configuration",
        )
        .operands("p r*")
        .data()
        .examples(
            &["jq . x.json", "jq -r '.items[] | .name'", "jq --arg x y '.a' f"],
            &["jq --unknown . f"],
        ),
    Row::new("base64|base32|basenc", ReadOnly)
        .opts("-d/--decode -i/--ignore-garbage -w/--wrap= --base64 --base64url --base32 --base32hex --base16 --base2msbf --base2lsbf --z85 --help --version")
        .operands("r?")
        .data()
        .examples(&["base64 f", "base64 -d"], &["base64 a b"]),
    Row::new("rev|tsort", ReadOnly)
        .opts("--help --version")
        .operands("r*")
        .data()
        .complete()
        .examples(&["rev f"], &["rev --x f"]),
    Row::new("fold", ReadOnly)
        .opts("-b/--bytes -s/--spaces -w/--width= -# --help --version")
        .operands("r*")
        .data()
        .complete()
        .examples(&["fold -w 80 f", "fold -1 f"], &["fold --x f"]),
    Row::new("fmt", ReadOnly)
        .opts("-c/--crown-margin -p/--prefix= -s/--split-only -t/--tagged-paragraph -u/--uniform-spacing -w/--width= -g/--goal= -# --help --version")
        .operands("r*")
        .data()
        .complete()
        .examples(&["fmt -w 72 f", "fmt -t f"], &["fmt --x f"]),
    Row::new("expand", ReadOnly)
        .opts("-i/--initial -t/--tabs= -# --help --version")
        .operands("r*")
        .data()
        .complete()
        .examples(&["expand -t 4 f"], &["expand --x f"]),
    Row::new("unexpand", ReadOnly)
        .opts("-a/--all --first-only -t/--tabs= -# --help --version")
        .operands("r*")
        .data()
        .complete()
        .examples(&["unexpand -a f"], &["unexpand --x f"]),
    Row::new("paste", ReadOnly)
        .opts("-d/--delimiters= -s/--serial -z/--zero-terminated --help --version")
        .operands("r*")
        .data()
        .complete()
        .examples(&["paste -sd, f"], &["paste --x f"]),
    Row::new("join", ReadOnly)
        .opts("-a= -e= -i/--ignore-case -j= -o= -t= -v= -1= -2= --check-order --nocheck-order --header -z/--zero-terminated --help --version")
        .operands("r r")
        .data()
        .complete()
        .examples(&["join -1 2 a b"], &["join --x a b"]),
    Row::new("md5sum|sha1sum|sha224sum|sha256sum|sha384sum|sha512sum|b2sum", ReadOnly)
        .complete()
        .opts(SUM_OPTIONS)
        .operands("r*")
        .data()
        .examples(&["sha256sum f", "md5sum --tag a b"], &["sha256sum -c list", "md5sum --x f"]),
    Row::new("cksum", ReadOnly)
        .opts("-a/--algorithm= --base64 !-c/--check -l/--length= --raw --tag --untagged -z/--zero --debug --help --version")
        .operands("r*")
        .data()
        .examples(&["cksum f"], &["cksum -c list"]),
    // ------------------------------------------------------------ system
    Row::new("date", ReadOnly)
        .opts(
            "-d/--date= --debug -f/--file=r -I/--iso-8601[=] --resolution -R/--rfc-email --rfc-3339= \
             -r/--reference=r -u/--utc/--universal --help --version !-s/--set=",
        )
        .operands("+?")
        .data()
        .examples(&["date", "date -u +%s", "date --iso-8601=seconds", "date -d yesterday"], &["date -s now", "date 010100002026", "date --se now", "date -us now"]),
    Row::new("cal|ncal", ReadOnly)
        .opts("-1 -3 -A= -B= -n= -S -m -s -j -y -Y -w -v -b -h -M -C --help -V")
        .operands("d*")
        .data()
        .examples(&["cal", "cal 2026"], &["cal --x"]),
    Row::new("whoami|groups|logname|users", ReadOnly)
        .opts("--help --version")
        .operands("d*")
        .data()
        .examples(&["whoami", "groups me"], &["whoami --x"]),
    Row::new("id", ReadOnly)
        .complete()
        .opts("-a -Z/--context -g/--group -G/--groups -n/--name -r/--real -u/--user -z/--zero --help --version")
        .operands("d*")
        .data()
        .examples(&["id -u", "id"], &["id --x"]),
    Row::new("uname|arch", ReadOnly)
        .complete()
        .opts("-a/--all -s/--kernel-name -n/--nodename -r/--kernel-release -v/--kernel-version -m/--machine -p/--processor -i/--hardware-platform -o/--operating-system --help --version")
        .data()
        .examples(&["uname -a"], &["uname x"]),
    Row::new("hostname", ReadOnly)
        .opts("-a/--alias -A/--all-fqdns -d/--domain -f/--fqdn/--long -i/--ip-address -I/--all-ip-addresses -s/--short -y/--yp/--nis --help -V/--version")
        .data()
        .examples(&["hostname", "hostname -f"], &["hostname evil", "hostname -F f", "hostname -b x"]),
    Row::new("uptime", ReadOnly)
        .opts("-p/--pretty -s/--since -h/--help -V/--version")
        .data()
        .examples(&["uptime"], &["uptime x"]),
    Row::new("printenv", ReadOnly)
        .complete()
        .opts("-0/--null --help --version")
        .operands("d*")
        .data()
        .examples(&["printenv HOME"], &["printenv --x"]),
    // ps reads BSD-style words without a dash; none of its options
    // writes or runs anything.
    Row::new("ps", ReadOnly)
        .any_words()
        .examples(&["ps aux", "ps -ef", "ps -o pid,cmd"], &[]),
    Row::new("pgrep", ReadOnly)
        .opts(
            "-d/--delimiter= -l/--list-name -a/--list-full -v/--inverse -w/--lightweight -c/--count \
             -f/--full -g/--pgroup= -G/--group= -i/--ignore-case -n/--newest -o/--oldest -O/--older= \
             -P/--parent= -s/--session= -t/--terminal= -u/--euid= -U/--uid= -x/--exact -F/--pidfile=r \
             -L/--logpidfile -r/--runstates= -A/--ignore-ancestors --cgroup= --ns= --nslist= -q/--quiet \
             -h/--help -V/--version",
        )
        .operands("p?")
        .data()
        .examples(&["pgrep -f server"], &["pgrep --x y"]),
    Row::new("free", ReadOnly)
        .opts("-b/--bytes -k/--kibi -m/--mebi -g/--gibi --tebi --pebi --kilo --mega --giga --tera --peta -h/--human --si -l/--lohi -L/--line -t/--total -v/--committed -w/--wide -s/--seconds= -c/--count= --help -V/--version")
        .data()
        .examples(&["free -h"], &["free x"]),
    Row::new("nproc", ReadOnly)
        .opts("--all --ignore= --help --version")
        .data()
        .examples(&["nproc"], &["nproc x"]),
    Row::new("locale", ReadOnly)
        .opts("-a/--all-locales -m/--charmaps -c/--category-name -k/--keyword-name -v/--verbose --help -V/--version")
        .operands("d*")
        .data()
        .examples(&["locale", "locale -a"], &["locale --x"]),
    Row::new("tty", ReadOnly)
        .opts("-s/--silent/--quiet --help --version")
        .data()
        .examples(&["tty"], &["tty x"]),
    Row::new("test|[|[[", ReadOnly)
        .any_words()
        .examples(&["test -f x", "[ -d src ]"], &[]),
    Row::new("sleep", ReadOnly)
        .complete()
        .opts("--help --version")
        .operands("d*")
        .data()
        .examples(&["sleep 1"], &["sleep --x"]),
    Row::new("seq", ReadOnly)
        .complete()
        .opts("-f/--format= -s/--separator= -w/--equal-width -# --help --version")
        .operands("d*")
        .data()
        .examples(&["seq 1 10", "seq -5 5"], &["seq --x 1"]),
    // ------------------------------------------------------------ git
    Row::new("git", ReadOnly)
        .global(
            "-C=r -c= --config-env=x --exec-path[=]x --no-pager -P/--paginate --no-optional-locks \
             --literal-pathspecs --glob-pathspecs --noglob-pathspecs --icase-pathspecs \
             --no-replace-objects !--git-dir= !--work-tree= !--namespace= !--bare !--super-prefix= \
             --no-advice --version --help !--list-cmds= !--attr-source=",
        )
        .grammar(git::git)
        .examples(
            &["git status", "git --no-pager log", "git -C sub status", "git -c color.ui=always log"],
            &["git", "git -c core.pager=x log", "git --git-dir=x log", "git my-alias"],
        ),
    Row::new("git status", ReadOnly)
        .opts(
            "-s/--short -b/--branch --show-stash --porcelain[=] --long -v/--verbose \
             -u/--untracked-files[=] --ignore-submodules[=] --ignored[=] -z --column[=] --no-column \
             --ahead-behind --no-ahead-behind --renames --no-renames --find-renames[=]",
        )
        .operands("r*")
        .data()
        .examples(&["git status", "git status -sb", "git status --porcelain=v2"], &["git status --x"]),
    Row::new("git log|git whatchanged", ReadOnly)
        .opts(concat!(git_diff_options!(), " ", git_log_options!()))
        .grammar(grammars::git_format)
        .operands("r*")
        .data()
        .examples(
            &["git log --oneline -5", "git log --oneline", "git log -p --stat HEAD~3..", "git log --format=%H -n 20"],
            &["git log --output=x", "git log --ext-diff", "git log --textconv", "git log --ext x"],
        ),
    Row::new("git show", ReadOnly)
        .opts(concat!(git_diff_options!(), " ", git_log_options!(), " --show-origin"))
        .grammar(grammars::git_format)
        .operands("r*")
        .data()
        .examples(&["git show HEAD", "git show --stat HEAD~1"], &["git show --ext-diff", "git show --output=x"]),
    Row::new("git diff", ReadOnly)
        .grammar(grammars::git_objects)
        .opts(git_diff_options!())
        .operands("r*")
        .data()
        .examples(&["git diff", "git diff HEAD~1", "git diff --stat HEAD~1", "git diff --cached"], &["git diff --output=x", "git diff --outp=x", "git diff --ext-diff"]),
    Row::new("git rev-parse", ReadOnly)
        .opts(
            "--abbrev-ref[=] --short[=] --verify -q/--quiet --show-toplevel --show-prefix --show-cdup \
             --git-dir --git-common-dir --absolute-git-dir --is-inside-work-tree --is-inside-git-dir \
             --is-bare-repository --is-shallow-repository --symbolic --symbolic-full-name --all \
             --branches[=] --tags[=] --remotes[=] --default= --revs-only --no-revs --flags --no-flags \
             --sq --sq-quote --local-env-vars --path-format= --show-object-format[=] --show-ref-format \
             --resolve-git-dir= --git-path= --shared-index-path --since= --after= --until= --before=",
        )
        .operands("d*")
        .data()
        .examples(&["git rev-parse HEAD", "git rev-parse --show-toplevel"], &["git rev-parse --parseopt"]),
    Row::new("git ls-files", ReadOnly)
        .opts(
            "-c/--cached -d/--deleted -m/--modified -o/--others -i/--ignored -s/--stage -u/--unmerged \
             -k/--killed --directory --no-empty-directory --eol -z -t -v -f --full-name --recurse-submodules \
             --abbrev[=] --debug --deduplicate --sparse --format= --error-unmatch --exclude-standard \
             -x/--exclude= -X/--exclude-from=r --exclude-per-directory= --with-tree=",
        )
        .operands("r*")
        .data()
        .examples(&["git ls-files", "git ls-files -m src"], &["git ls-files --x"]),
    Row::new("git ls-tree", ReadOnly)
        .opts("-d -r -t -l/--long -z --name-only --name-status --object-only --full-name --full-tree --abbrev[=] --format=")
        .operands("d r*")
        .data()
        .examples(&["git ls-tree -r HEAD"], &["git ls-tree --x HEAD"]),
    Row::new("git blame|git annotate", ReadOnly)
        .opts(
            "-b --root --show-stats -L= -l -t -S=r --reverse --first-parent -p/--porcelain --line-porcelain \
             --incremental --encoding= --contents=r --date= --progress --no-progress -M[=] -C[=] \
             --ignore-rev= --ignore-revs-file=r --color-lines --color-by-age -h -c --score-debug \
             -f/--show-name -n/--show-number -s -e/--show-email -w --abbrev[=]",
        )
        .operands("r*")
        .data()
        .examples(&["git blame src/main.rs", "git blame -L 1,20 f"], &["git blame --x f"]),
    Row::new("git describe", ReadOnly)
        .opts("--dirty[=] --broken[=] --all --tags --contains --abbrev[=] --candidates= --exact-match --debug --long --match= --exclude= --always --first-parent")
        .operands("d*")
        .data()
        .examples(&["git describe --tags"], &["git describe --x"]),
    Row::new("git shortlog", ReadOnly)
        .grammar(grammars::git_format)
        .opts(concat!("--numbered --summary -s -e/--email --group= -c -w[=] ", git_log_options!()))
        .operands("r*")
        .data()
        .examples(&["git shortlog -sn"], &["git shortlog --x"]),
    Row::new("git cat-file", ReadOnly)
        .grammar(grammars::git_objects)
        .opts("-t -s -e -p --mailmap --no-mailmap --allow-unknown-type !--batch[=] !--batch-check[=] !--batch-command[=] --batch-all-objects --buffer --follow-symlinks --unordered -z -Z ^--textconv ^--filters --path=")
        .operands("d*")
        .data()
        .examples(&["git cat-file -p HEAD"], &["git cat-file --x HEAD"]),
    Row::new("git merge-base", ReadOnly)
        .opts("-a/--all --octopus --independent --is-ancestor --fork-point")
        .operands("d*")
        .data()
        .examples(&["git merge-base HEAD main"], &["git merge-base --x"]),
    Row::new("git show-ref", ReadOnly)
        .opts("--head --branches --tags -d/--dereference -s/--hash[=] --abbrev[=] --verify --exists -q/--quiet --exclude-existing[=]")
        .operands("d*")
        .data()
        .examples(&["git show-ref --tags"], &["git show-ref --x"]),
    Row::new("git grep", ReadOnly)
        .opts(
            "--cached --untracked --no-index --no-exclude-standard --exclude-standard --recurse-submodules \
             -a/--text ^--textconv --no-textconv -i/--ignore-case -I --max-depth= -r/--recursive \
             --no-recursive -w/--word-regexp -v/--invert-match -h -H --full-name -E/--extended-regexp \
             -G/--basic-regexp -P/--perl-regexp -F/--fixed-strings -n/--line-number --column \
             -l/--files-with-matches --name-only -L/--files-without-match -z/--null -o/--only-matching \
             -c/--count --color[=] --no-color --break --heading -p/--show-function -# -C/--context= \
             -A/--after-context= -B/--before-context= -W/--function-context -m/--max-count= --threads= \
             -f=P -e=p --and --or --not --all-match -q/--quiet ^-O/--open-files-in-pager[=]x",
        )
        .operands("p r*")
        .walks()
        .trees()
        .grammar(grammars::git_objects)
        .data()
        .examples(&["git grep -n x", "git grep -e a -- src"], &["git grep -Oless x", "git grep --open x", "git grep -nO x"]),
    Row::new("git branch", ReadOnly)
        .opts(
            "-a/--all -r/--remotes -l/--list -v/--verbose -q/--quiet --abbrev[=] --no-abbrev \
             --color[=] --no-color --column[=] --no-column --sort= --merged[=] --no-merged[=] \
             --contains[=] --no-contains[=] --points-at= --format= -i/--ignore-case --show-current \
             --omit-empty",
        )
        .grammar(grammars::git_branch)
        .operands("d*")
        .data()
        .examples(&["git branch", "git branch -a", "git branch --list 'feat*'", "git branch -a -v", "git branch --show-current"], &["git branch new", "git branch -D old", "git branch --del x", "git branch -m a b", "git branch -vd x", "git branch --set-upstream-to=x"]),
    Row::new("git tag", ReadOnly)
        .opts("-l/--list -n[=] --sort= --contains[=] --no-contains[=] --merged[=] --no-merged[=] --points-at= --column[=] --no-column --format= --color[=] -i/--ignore-case --omit-empty")
        .grammar(grammars::git_tag)
        .operands("d*")
        .data()
        .examples(&["git tag", "git tag -l 'v*'", "git tag --list"], &["git tag v1", "git tag -d v1", "git tag -a v1 -m x"]),
    Row::new("git remote", ReadOnly)
        .opts("-v/--verbose")
        .grammar(grammars::git_remote)
        .operands("d*")
        .no_permute()
        .data()
        .examples(&["git remote", "git remote -v", "git remote get-url origin", "git remote show -n origin"], &["git remote show origin", "git remote show https://evil.example/x", "git remote add x y", "git remote -v add x y", "git remote rename a b", "git remote prune origin"]),
    Row::new("git stash", ReadOnly)
        .grammar(grammars::git_stash)
        .operands("d*")
        .no_permute()
        .data()
        .examples(&["git stash list", "git stash show -p"], &["git stash", "git stash pop", "git stash drop"]),
    Row::new("git config", ReadOnly)
        .grammar(grammars::git_config)
        .any_words()
        .examples(&["git config --get user.name", "git config --list", "git config -l", "git config get user.name"], &["git config user.name x", "git config core.pager less", "git config --unset x"]),
    Row::new("git reflog", ReadOnly)
        .opts(git_log_options!())
        .grammar(grammars::git_reflog)
        .operands("d*")
        .no_permute()
        .data()
        .examples(&["git reflog", "git reflog show -5"], &["git reflog expire --all", "git reflog delete x"]),
    Row::new("git worktree", ReadOnly)
        .grammar(grammars::git_worktree)
        .operands("d*")
        .no_permute()
        .data()
        .examples(&["git worktree list", "git worktree list --porcelain"], &["git worktree add x", "git worktree remove x"]),
    Row::new("git count-objects", ReadOnly)
        .opts("-v/--verbose -H/--human-readable")
        .data()
        .examples(&["git count-objects -vH"], &["git count-objects x"]),
    Row::new("git version", ReadOnly)
        .opts("--build-options")
        .data()
        .examples(&["git version"], &["git version --x"]),
    // What the walker treats as changing things: rows for their data-only
    // arguments and their own grammars.
    Row::new("git add|git am|git apply|git archive|git bundle|git check-attr|git check-ignore|git checkout|git cherry|git cherry-pick|git clean|git clone|git commit|git fetch|git format-patch|git fsck|git gc|git init|git ls-remote|git merge|git mv|git notes|git pull|git push|git range-diff|git rebase|git reset|git restore|git rev-list|git revert|git rm|git sparse-checkout|git switch", Acts)
        .data()
        .examples(&[], &["git push", "git commit -m x", "git fetch", "git ls-remote https://x", "git pull"]),
    // ------------------------------------------------------------ edits
    Row::new("tee", Edits)
        .opts("-a/--append -i/--ignore-interrupts -p --output-error[=] --help --version")
        .operands("w*")
        .data()
        .examples(&[], &["tee out", "tee -a log"]),
    Row::new("rm", Edits)
        .opts("-f/--force -r/--recursive -R -d/--dir -v/--verbose -i -I --one-file-system --preserve-root")
        .operands("d*")
        .grammar(files::rm)
        .data()
        .files()
        .examples(&[], &["rm x", "rm -rf x"]),
    Row::new("rmdir", Edits)
        .opts("-p/--parents -v/--verbose --ignore-fail-on-non-empty")
        .operands("d*")
        .grammar(files::rmdir)
        .data()
        .files()
        .examples(&[], &["rmdir d"]),
    Row::new("mkdir", Edits)
        .opts("-p/--parents -v/--verbose -m/--mode=")
        .operands("d*")
        .grammar(files::mkdir)
        .data()
        .files()
        .examples(&[], &["mkdir -p a/b"]),
    Row::new("touch", Edits)
        .opts("-a -c/--no-create -m -f -d/--date= -t= -r/--reference=r --time=")
        .operands("d*")
        .grammar(files::touch)
        .data()
        .files()
        .examples(&[], &["touch f", "touch -r ref f"]),
    Row::new("cp", Edits)
        .opts(
            "-a/--archive -b -d -f/--force -H -i/--interactive -L/--dereference -n/--no-clobber -p \
             -P/--no-dereference -r/--recursive -R -T/--no-target-directory -u -v/--verbose \
             -x/--one-file-system -t/--target-directory= -S/--suffix= --backup[=] --preserve[=] \
             --no-preserve= --parents --remove-destination --strip-trailing-slashes --update[=] \
             --attributes-only --sparse= --reflink[=] --debug",
        )
        .operands("d*")
        .grammar(files::cp)
        .data()
        .files()
        .examples(&[], &["cp a b", "cp -r a b dest/"]),
    Row::new("mv", Edits)
        .opts(
            "-b -f/--force -i/--interactive -n/--no-clobber -T/--no-target-directory -u -v/--verbose \
             -t/--target-directory= -S/--suffix= --backup[=] --strip-trailing-slashes --update[=] \
             --exchange --no-copy --debug",
        )
        .operands("d*")
        .grammar(files::mv)
        .data()
        .files()
        .examples(&[], &["mv a b"]),
    Row::new("ln|chmod|chown|chgrp|truncate|shred|unlink|install", Acts)
        .data()
        .examples(&[], &["ln -s a b", "chmod +x f"]),
    Row::new("sed", Acts)
        .opts(
            "-n/--quiet/--silent -e/--expression=p -f/--file=x -i/--in-place[=] -l/--line-length= \
             -E/-r/--regexp-extended -s/--separate -u/--unbuffered -z/--null-data --posix --debug \
             --sandbox --follow-symlinks -b/--binary --help --version",
        )
        .operands("d*")
        .grammar(files::sed)
        .data()
        .files()
        .examples(&[], &["sed -n 1p x", "sed -i s/a/b/ f", "sed -f s.sed f"]),
    Row::new("awk|gawk|mawk|nawk", Acts)
        .opts(
            "-F/--field-separator= -v/--assign= -f/--file=x -e/--source=p -E/--exec=x -i/--include=x \
             -l/--load=x -I=x -W=x -o/--pretty-print[=]w -p/--profile[=]w -d/--dump-variables[=]w \
             -D/--debug[=] -L/--lint[=] -b/--characters-as-bytes -c/--traditional -C/--copyright \
             -g/--gen-pot -h/--help -M/--bignum -N/--use-lc-numeric -n/--non-decimal-data \
             -O/--optimize -P/--posix -r/--re-interval -s/--no-optimize -S/--sandbox -t/--lint-old \
             -V/--version",
        )
        .operands("d*")
        .grammar(files::awk)
        .data()
        .files()
        .examples(&[], &["awk 1 x", "awk -f p.awk x"]),
    Row::new("tar", Acts)
        .grammar(tar::tar)
        .any_words()
        .examples(&[], &["tar -tf a.tar", "tar czf out.tgz d"]),
    // ------------------------------------------------------------ network
    Row::new("curl", Acts)
        .opts(
            "-s/--silent -S/--show-error -L/--location -f/--fail --fail-with-body -v/--verbose \
             -i/--include -I/--head -k/--insecure -G/--get -N/--no-buffer --compressed -n/--netrc \
             -O/--remote-name -J/--remote-header-name --remote-name-all -Z/--parallel -q/--disable \
             -g/--globoff -4/--ipv4 -6/--ipv6 --http1.1 --http2 -j/--junk-session-cookies \
             -R/--remote-time --create-dirs -l/--list-only -a/--append -B/--use-ascii \
             -p/--proxytunnel --raw --tcp-nodelay --no-keepalive --retry-connrefused --ssl \
             --ssl-reqd -V/--version -h/--help[=] \
             -o/--output=w -D/--dump-header=w -c/--cookie-jar=w -K/--config=x -b/--cookie= \
             -d/--data= --data-raw= --data-binary= --data-urlencode= --data-ascii= --json= \
             -F/--form= --form-string= -H/--header= -u/--user= -x/--proxy= -X/--request= \
             -e/--referer= -E/--cert=r --key=r --cacert=r --capath=r -A/--user-agent= \
             -m/--max-time= --connect-timeout= --retry= --retry-delay= --retry-max-time= \
             -T/--upload-file=r -w/--write-out= --output-dir=w --trace=w --trace-ascii=w \
             --libcurl=w --stderr=w --etag-save=w --etag-compare=r --hsts=w --alt-svc=w --url= \
             --resolve= --connect-to= -r/--range= --limit-rate= --max-filesize= \
             --oauth2-bearer= -y/--speed-time= -Y/--speed-limit= -z/--time-cond= \
             -C/--continue-at= -Q/--quote= -t/--telnet-option= -P/--ftp-port= -U/--proxy-user= \
             --interface= --dns-servers= --local-port= --max-redirs= --noproxy= --proto= \
             --proto-redir= --variable=",
        )
        .operands("d*")
        .grammar(net::curl)
        .data()
        .examples(&[], &["curl https://example.invalid", "curl -o out https://x"]),
    Row::new("wget", Acts)
        .opts(
            "-O/--output-document=w -o/--output-file=w -a/--append-output=w -e/--execute=x \
             --config=x --use-askpass=x -i/--input-file=r -B/--base= -T/--timeout= -t/--tries= \
             -w/--wait= -Q/--quota= -U/--user-agent= --user= --password= --header= --post-data= \
             --post-file=r --body-data= --body-file=r --method= -P/--directory-prefix=w \
             --load-cookies=r --save-cookies=w -l/--level= -A/--accept= -R/--reject= \
             -D/--domains= --limit-rate= -n= -q/--quiet -v/--verbose -c/--continue \
             -N/--timestamping -r/--recursive -m/--mirror -k/--convert-links \
             -p/--page-requisites -S/--server-response --spider -x/--force-directories \
             --no-check-certificate -b/--background -h/--help -V/--version",
        )
        .operands("d*")
        .grammar(net::wget)
        .data()
        .examples(&[], &["wget https://example.invalid"]),
    Row::new("ssh", Acts)
        .opts(
            "-B= -b= -c= -D= -E=w -e= -F=x -I= -i=r -J= -L= -l= -m= -O= -o= -p= -Q= -R= -S= -W= -w= \
             -4 -6 -A -a -C -f -G -g -K -k -M -N -n -q -s -T -t -V -v -X -x -Y -y",
        )
        .no_permute()
        .grammar(net::ssh)
        .examples(&[], &["ssh host ls"]),
    Row::new("scp|sftp", Acts)
        .opts(
            "-S=x -F=x -i=r -o= -P= -l= -c= -J= -D= -X= -b=r -B= -R= -s= \
             -3 -4 -6 -A -C -O -p -q -r -T -v -N -a -f",
        )
        .grammar(net::ssh)
        .examples(&[], &["scp a host:b"]),
    Row::new("rsync", Acts)
        .opts("-e/--rsh=x --rsync-path=x")
        .examples(&[], &["rsync -a a b:"]),
    // ------------------------------------------------------------ pagers, manuals
    Row::new("less|more", Acts)
        .opts(
            "-b= -h= -j= -k=x -o=w -O=w -p= -P= -t= -T=r -x= -y= -z= --log-file=w --LOG-FILE=w \
             --lesskey-file=x --tag= --tag-file=r --prompt= --pattern= --shift= --tabs= \
             --max-back-scroll= --max-forw-scroll= --window= --jump-target=",
        )
        .grammar(grammars::less)
        .data()
        .examples(&[], &["less f", "less +!id f"]),
    Row::new("man", Acts)
        .opts("-P/--pager=x -H/--html[=]x --browser=x -C/--config-file=r")
        .data()
        .examples(&[], &["man ls"]),
    Row::new("info|whatis|apropos|tldr", Acts)
        .data()
        .examples(&[], &["info ls"]),
    // ------------------------------------------------------------ archives
    Row::new("zip", Acts)
        .opts("--unzip-command=x -b= -n= -t= -x= -i= -P= -O=w --out=w")
        .operands("w r*")
        .grammar(grammars::zip)
        .data()
        .examples(&[], &["zip a.zip f"]),
    Row::new("source|.", Acts)
        .operands("r d*")
        .no_permute()
        .files()
        .examples(&[], &["source x.sh"]),
    Row::new("gzip|gunzip|zcat|bzip2|xz|unzip", Acts)
        .data()
        .examples(&[], &["gzip f"]),
    // ------------------------------------------------------------ builds and tests
    Row::new("cargo", Acts)
        .global("--config=x -Z= -C= --locked --frozen --offline -q/--quiet -v/--verbose --color= --list --explain= --version -V -h/--help")
        .examples(&[], &["cargo test", "cargo +nightly publish"]),
    Row::new("cargo test|cargo build|cargo check|cargo clippy|cargo run|cargo bench|cargo doc|cargo fmt|cargo publish|cargo install", Acts)
        .opts("--config=x -p/--package= -j/--jobs= -F/--features= --target= --target-dir=w --artifact-dir=w --manifest-path=x --profile= --color= --message-format= --exclude= --lockfile-path=w -Z=x")
        .grammar(grammars::cargo_test_binary)
        .examples(&[], &["cargo test -p x", "cargo test --config 'target.x.runner=\"sh\"'"]),
    Row::new("npm|pnpm|yarn", Acts)
        .global("--prefix=x -C/--dir=x --userconfig=x --globalconfig=x --script-shell=x --node-options=x -w/--workspace= --workspaces -s/--silent -q/--quiet --loglevel= -d --registry=")
        .examples(&[], &["npm test", "npm --prefix . publish"]),
    Row::new("npm test|npm run|npm run-script|npm start|npm exec|npm ci|npm install|npm i|npm publish|pnpm test|pnpm run|pnpm install|pnpm publish|yarn test|yarn run|yarn install|yarn publish", Acts)
        .opts("--prefix=x -C/--dir=x --userconfig=x --globalconfig=x --script-shell=x --node-options=x --shell=x -c/--call=x --cache= -w/--workspace= --workspaces --if-present --ignore-scripts -s/--silent -q/--quiet --loglevel=")
        .examples(&[], &["npm test --script-shell=/tmp/x.sh", "npm test --node-options=--require=/tmp/x.js"]),
    Row::new("go", Acts)
        .global("-* -C=r")
        .examples(&[], &["go test ./..."]),
    Row::new("go test|go build|go run|go vet|go install|go generate|go mod|go get|go fmt|go list", Acts)
        .opts("-* -exec=x -toolexec=x -vettool=x -C=x -overlay=x -modfile=x -pgo=r -o=w -coverprofile=w -cpuprofile=w -memprofile=w -blockprofile=w -mutexprofile=w -trace=w -outputdir=w -json -v -race -count= -run= -timeout= -short -cover -tags= -p= -mod=")
        .examples(&[], &["go test -exec /tmp/x ./...", "go test -toolexec=/tmp/x ./..."]),
    Row::new("pytest|py.test", Acts)
        .opts("--basetemp=w -p=x --rootdir=x -c/--config-file=x --confcutdir=x --override-ini=x -o=x --junitxml=w --junit-xml=w --resultlog=w --result-log=w --debug[=]w --pastebin= --pyargs --import-mode= -x -q -v -k= -m=")
        .examples(&[], &["pytest --basetemp=/home", "pytest -p evil"]),
    Row::new("docker|podman", Acts)
        .global("--context= -c= -H/--host= --config=r -D/--debug -l/--log-level= --tls --tlscacert=r --tlscert=r --tlskey=r --tlsverify -v/--version")
        .examples(&[], &["docker ps", "docker --context x rm c"]),
    Row::new("kubectl", Acts)
        .global("-n/--namespace= --context= --cluster= --kubeconfig=r --user= -s/--server= --token= -v= --as= --as-group=")
        .examples(&[], &["kubectl get pods", "kubectl -n x delete pod p"]),
    Row::new("terraform|tofu", Acts)
        .global("-* -chdir=r -help -version")
        .examples(&[], &["terraform plan"]),
    Row::new("pip|pip3", Acts)
        .global("--isolated --require-virtualenv --python= -v/--verbose -q/--quiet --log=w --no-input --proxy= --retries= --timeout= --exists-action= --trusted-host= --cert=r --client-cert=r --cache-dir= --no-cache-dir --disable-pip-version-check --no-color --no-python-version-warning --use-feature= --use-deprecated=")
        .examples(&[], &["pip install x"]),
    Row::new("gcc|g++|cc|c++|clang|clang++|ld", Acts)
        .at_files()
        .operands("r*")
        .examples(&[], &["gcc @FILE"]),
    // ------------------------------------------------------------ interpreters
    Row::new("python|python2|python3|pypy|pypy3|perl|ruby|node|nodejs|deno|bun|php|lua|luajit|Rscript|julia|tclsh|wish|osascript|groovy|scala|kotlin|java|jshell|swift|pwsh|powershell|irb|ghci|runghc|ts-node|tsx|elixir|erl|escript|racket|guile|sbcl|clojure", Interpreter)
        .examples(&[], &["python3 -c 1", "node x.js"]),
    // ------------------------------------------------------------ shell builtins whose words are data
    Row::new("export|unset|local|declare|typeset|readonly|read|shift|exit|return|break|continue|wait|umask|ulimit|jobs|help|let|hash|command|kill|pkill|killall", Acts)
        .data()
        .examples(&[], &["kill 1"]),
];
