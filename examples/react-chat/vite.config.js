import { defineConfig } from "vite";
import { exampleViteConfig } from "../shared/vite-config.js";

export default defineConfig(exampleViteConfig());
