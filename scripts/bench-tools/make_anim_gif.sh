#!/usr/bin/env bash
# make_anim_gif.sh SOURCE.jpg OUT.gif [FRAMES]
#
# The animated benchmark source (issue 12): FRAMES (100) frames of 480x270, each a 960x540 crop of
# SOURCE at an offset that moves 16 px per frame, halved and reduced to 256 colours by djpeg (its
# own palette per frame, as GIFs cut from video have), 40 ms per frame, looping forever. Made
# with Debian's jpegtran, djpeg (libjpeg-turbo-progs) and gifsicle; the same SOURCE gives the same
# bytes.
set -euo pipefail
src="$1" out="$2" frames="${3:-100}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
for ((i = 0; i < frames; i++)); do
    x=$(((i * 16) % 960)) y=$(((i * 16) % 528))
    jpegtran -crop "960x540+$x+$y" "$src" | djpeg -gif -colors 256 -scale 1/2 >"$work/f$(printf %04d "$i").gif"
done
gifsicle --no-warnings --delay 4 --loopcount=forever "$work"/f*.gif >"$out"
