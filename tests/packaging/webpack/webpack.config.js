// webpack 5 as it comes: no `experiments`, no loader for .wasm (the package needs neither).
const path = require("path");

module.exports = {
  mode: "production",
  entry: "./src/index.js",
  output: { path: path.resolve(__dirname, "dist"), filename: "main.js" },
};
