#!/usr/bin/env bash
# Copy the front-end packages installed by npm into static/vendor (not versioned).
set -euo pipefail
cd "$(dirname "$0")/.."
dest=static/vendor
rm -rf "$dest"
mkdir -p "$dest/swagger-ui" "$dest/htmx" "$dest/chartjs" "$dest/sortablejs"
cp node_modules/swagger-ui-dist/{swagger-ui-bundle.js,swagger-ui-standalone-preset.js,swagger-ui.css,favicon-32x32.png} "$dest/swagger-ui/"
cp node_modules/htmx.org/dist/htmx.min.js "$dest/htmx/"
cp node_modules/chart.js/dist/chart.umd.min.js "$dest/chartjs/" 2>/dev/null || cp node_modules/chart.js/dist/chart.umd.js "$dest/chartjs/chart.umd.min.js"
cp node_modules/sortablejs/Sortable.min.js "$dest/sortablejs/"
echo "front-end assets copied to $dest"
