export const metadata = { title: "Next.js + agent-chat-store" };

export default function RootLayout({ children }) {
  return (
    <html lang="en">
      <body>{children}</body>
    </html>
  );
}
